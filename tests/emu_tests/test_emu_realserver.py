"""The emulator's defaults behave like a stock BOINC 8.3 server on PHP 8.2
(issue 9): PHP's upload limits with their exact replies, create_work's
job line and SQL, an empty <ping>, query_batch job details with exit
statuses, the stock query_completed_job failure."""
import emu
from emu import error_msg, tag_value, xml_create_batch, xml_simple

MB = 1024 * 1024


def new_batch(e, name="rs"):
    r = e.rpc(xml_create_batch(e.authenticator, name))
    return int(tag_value(r.body, "batch_id"))


def upload(e, bid, contents):
    names = [emu.phys_name(c) for c in contents]
    return e.job_file(xml_simple("upload_files", e.authenticator, batch_id=bid,
                                 phys_name=names), contents), names


def test_stock_limits_by_default(e):
    assert e.control("limits") == {"post_max_bytes": 8 * MB, "max_file_uploads": 20,
                                   "upload_max_filesize": 2 * MB}
    assert e.control("quirks") == {"php-warnings": True, "qcj-stock": True,
                                   "sql-backslash": True}


def test_more_than_20_files_are_dropped_by_php(e):
    bid = new_batch(e)
    r, names = upload(e, bid, [b"file %d" % i for i in range(30)])
    assert error_msg(r.body) == "# of uploaded files (20) doesn't agree with request (30)"
    assert not set(names) & set(e.state()["files"])
    c = e.counters()["php_limits"]
    assert c["over_max_file_uploads"] == 1 and c["most_files_in_post"] == 30
    r, names = upload(e, bid, [b"file %d" % i for i in range(20)])
    assert b"<success/>" in r.body


def test_post_over_8m_arrives_empty(e):
    bid = new_batch(e)
    r, names = upload(e, bid, [bytes([65 + i]) * (2 * MB) for i in range(5)])
    assert error_msg(r.body) == "can't parse request message: "
    assert "POST Content-Length of" in r.text
    assert e.counters()["php_limits"]["over_post_max_size"] == 1


def test_file_over_2m_is_refused_after_the_earlier_ones(e):
    bid = new_batch(e)
    small, big = b"small", b"B" * (2 * MB + 1)
    r, names = upload(e, bid, [small, big])
    assert error_msg(r.body) == ("%s upload failed because: The uploaded file exceeds "
                                 "upload_max_filesize of php.ini." % names[1])
    files = e.state()["files"]
    assert names[0] in files and names[1] not in files
    assert e.set_limits(upload_max_filesize="4M")["upload_max_filesize"] == 4 * MB
    r, names = upload(e, bid, [big])
    assert b"<success/>" in r.body


def test_php_limits_option_raises_them(emu_factory):
    e = emu_factory(php_limits="max_file_uploads=200,post_max_size=64M,upload_max_filesize=32M")
    assert e.control("limits") == {"post_max_bytes": 64 * MB, "max_file_uploads": 200,
                                   "upload_max_filesize": 32 * MB}
    bid = new_batch(e)
    r, _ = upload(e, bid, [b"f%d" % i for i in range(30)] + [b"x" * (3 * MB)])
    assert b"<success/>" in r.body
    e2 = emu_factory("none", php_limits="none")
    assert e2.control("limits") == {"post_max_bytes": 0, "max_file_uploads": 0,
                                    "upload_max_filesize": 0}


def submit_cmd(e, name, cmdline, job="j"):
    r = e.rpc(xml_create_batch(e.authenticator, name))
    bid = int(tag_value(r.body, "batch_id"))
    phys = emu.stage_files(e, e.authenticator, bid, [b"in " + name.encode()])
    return e.rpc(emu.xml_submit_batch(e.authenticator, bid, "uppercase",
                                      [(job + name, phys, cmdline)]))


def test_create_work_sql_error_for_a_lone_quote(e):
    r = submit_cmd(e, "q1", "'hello world' x")
    msg = error_msg(r.body)
    assert msg.startswith("create_work failed: Database error: You have an error in your SQL "
                          "syntax; check the manual that corresponds to your MariaDB server "
                          "version for the right syntax to use near ''hello world' x")
    assert msg.endswith("' at line 1")
    assert e.counters()["jobs_by_name"] == {}


def test_two_quotes_are_stored_as_one(e):
    r = submit_cmd(e, "q2", "''")
    assert tag_value(r.body, "batch_id") is not None
    e.run()
    out = e.rpc(xml_simple("query_completed_job", e.authenticator, job_name="jq2")).text
    # stored as a lone ', which the client splits into an empty argument:
    # the job runs with an argument nobody submitted
    assert "argument 1: []" in out


def test_double_quote_line_break_and_limits_break_the_job_line(e):
    for n, cmd in enumerate(['say "hi"', "a\nb", "x" * 4100, " ".join(["w"] * 100)]):
        r = submit_cmd(e, "b%d" % n, cmd)
        assert error_msg(r.body).startswith("create_work failed: "), (cmd[:20], r)
    r = submit_cmd(e, "ok", "a$b x`y c\\d")
    assert tag_value(r.body, "batch_id") is not None


def test_empty_ping_is_refused(e):
    r = e.rpc("<ping></ping>")
    assert error_msg(r.body) == "can't parse request message: &lt;ping&gt;&lt;/ping&gt;"
    assert b"<success>1</success>" in e.rpc("<ping> </ping>").body


def test_query_batch_details_list_exit_statuses_of_failed_instances(e):
    a = e.authenticator
    bid, jobs = emu.submit(e, a, "xs", "failer", [[b"x"], [b"y"]], cmdlines={0: "--exit 3"})
    e.run()
    r = e.rpc(xml_simple("query_batch", a, batch_id=bid, get_job_details=1))
    body = r.text
    first = body[body.index("<name>%s</name>" % jobs[0]):body.index("<name>%s</name>" % jobs[1])]
    assert first.count("<exit_status>3</exit_status>") == 2     # two failed instances
    assert "<exit_status>" not in body[body.index("<name>%s</name>" % jobs[1]):]
    # the stock query_completed_job dies for the failed job
    r = e.rpc(xml_simple("query_completed_job", a, job_name=jobs[0]))
    assert "Undefined variable" in r.text and "</query_completed_job>" not in r.text


def completed_stderr(e, job):
    e.run()
    return e.rpc(xml_simple("query_completed_job", e.authenticator, job_name=job)).text


def test_backslashes_in_the_command_line_are_decoded_like_mariadb(e):
    # third round of reference/boinc-web-rpc.md: create_work's unescaped
    # insert, MariaDB's default sql_mode
    r = submit_cmd(e, "bs", "x\\\\y end\\q c:\\new 50\\% tail\\")
    assert tag_value(r.body, "batch_id") is not None        # silently accepted
    out = completed_stderr(e, "jbs")
    for n, arg in enumerate(["x\\y", "endq", "c:", "ew", "50\\%", "tail"], 1):
        assert "argument %d: [%s]" % (n, arg) in out, out
    assert "argument 7:" not in out


def test_a_job_name_with_a_backslash_is_stored_as_another_name(e):
    r = submit_cmd(e, "nm", "", job="a\\qb")
    assert tag_value(r.body, "batch_id") is not None
    assert list(e.counters()["jobs_by_name"]) == ["aqbnm"]
    # a trailing backslash escapes the closing quote of the SQL insert
    r = submit_cmd(e, "tr\\", "", job="end")
    assert error_msg(r.body).startswith("create_work failed: Database error: You have an "
                                        "error in your SQL syntax")
    assert list(e.counters()["jobs_by_name"]) == ["aqbnm"]


def test_backslash_quirk_off_keeps_them(emu_factory):
    e = emu_factory(quirks="none")
    r = submit_cmd(e, "raw", "x\\\\y a\\b")
    assert tag_value(r.body, "batch_id") is not None
    out = completed_stderr(e, "jraw")
    assert "argument 1: [x\\\\y]" in out and "argument 2: [a\\b]" in out, out


def test_job_line_of_4095_bytes_fails_create_work(e):
    # the line submit_rpc_handler.php writes for the job, newline included
    def line_len(name, cmd, phys):
        return len(" --wu_name %s --command_line \"%s\" %s\n" % (name, cmd, phys))
    phys = emu.phys_name(b"in L4094")
    base = line_len("jL4094", "", phys)
    r = submit_cmd(e, "L4094", "x" * (4094 - base))
    assert tag_value(r.body, "batch_id") is not None, r.body[:300]
    r = submit_cmd(e, "L4095", "x" * (4095 - base))
    assert error_msg(r.body) == "create_work failed: fgets() buffer was too small"
    assert "jL4095" not in e.counters()["jobs_by_name"]
