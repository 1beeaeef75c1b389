"""What BOINC_SELECT_PROJECT of an unusable project leaves in the server's
log (issue 42, sampled mutation: the warning dropped passed every net).
The real boinc_gahp over pipes; no request leaves the machine."""


def test_an_unusable_project_is_logged_with_why_and_no_secret(gahp):
    g = gahp()
    assert g.command("BOINC_SELECT_PROJECT ftp://user:s3cret@127.0.0.1/x a") == "S"
    g.wait_stderr("BOINC_SELECT_PROJECT: project URL must start with http:// or https:// "
                  "(check grid_resource); this project's commands get that error", timeout=30)
    assert g.command("BOINC_SELECT_PROJECT http://127.0.0.1/x ") == "S"
    g.wait_stderr("BOINC_SELECT_PROJECT: the authenticator is empty (check "
                  "boinc_authenticator_file); this project's commands get that error",
                  timeout=30)
    assert "s3cret" not in g.stderr_text()
