"""get_output.php and query_completed_job: good downloads and every error
form of the captures (60-75, 88)."""

import hashlib
import io
import re
import zipfile

import emu
from emu import error_msg, xml_simple


def done_job(e, app="uppercase", inputs=(b"sample batch input alpha\n",), cmd=None):
    bid, jobs = emu.submit(e, e.authenticator, "ob_" + app, app, [list(inputs)],
                           cmdlines={0: cmd} if cmd else None)
    e.run()
    return jobs[0]


def test_workunit_file_good_and_errors(e):
    a = e.authenticator
    job = done_job(e)
    r = e.get_output(cmd="workunit_file", auth_str=a, wu_name=job, file_num=0)
    assert r.status == 200 and r.body == b"SAMPLE BATCH INPUT ALPHA\n"
    assert r.headers["content-type"] == "application/octet-stream"
    assert re.fullmatch(r"attachment; filename=%s_0_r[0-9a-f]+_0" % job, r.headers["content-disposition"])
    assert r.headers["content-description"] == "File Transfer"
    assert int(r.headers["content-length"]) == len(r.body)

    def err(**kw):
        p = dict(cmd="workunit_file", auth_str=a, wu_name=job, file_num=0)
        p.update(kw)
        return e.get_output(**p)

    r = err(auth_str="deadbeefdeadbeefdeadbeefdeadbeef")
    assert (r.status, r.body, r.headers["content-type"]) == (200, b"ERROR: bad authenticator",
                                                            "text/html; charset=UTF-8")
    assert err(auth_str=e.users()["other_user"]).body == b"ERROR: bad authenticator"
    assert err(wu_name="no_such_job").body == b"ERROR: no workunit no_such_job"
    # out of range: announces 4096 bytes, sends PHP warnings, cuts the connection
    r = err(file_num=5)
    assert r.partial and r.headers["content-length"] == "4096"
    assert r.headers["content-type"] == "application/octet-stream"
    assert r.body.startswith(b"<br />\n<b>Warning</b>:  Undefined array key 5")
    r = e.get_output(cmd="frobnicate", auth_str=a)
    assert r.body == b"bad command\n"
    r = e.get_output(cmd="workunit_file", auth_str=a, file_num=0)
    assert r.headers["content-type"] == "text/html; charset=utf-8"
    assert b"<h2>Unable to handle request</h2>\nmissing or bad parameter: wu_name<br>" in r.body
    r = e.request("GET", e.project_path("get_output.php"))
    assert b"missing or bad parameter: cmd<br>" in r.body and len(r.body) == 4887 - len(
        "http://127.0.0.1/test/") * r.text.count(e.url) + len(e.url) * r.text.count(e.url)
    assert e.counters()["rpc"]["get_output"] >= 7


def test_error_and_aborted_jobs(e):
    a = e.authenticator
    bid, jobs = emu.submit(e, a, "errb", "failer", [[b"x"], [b"y"]], cmdlines={0: "--exit 3"})
    e.rpc(xml_simple("abort_jobs", a, job_name=jobs[1]))
    r = e.get_output(cmd="workunit_file", auth_str=a, wu_name=jobs[1], file_num=0)
    assert r.body == ("ERROR: no canonical result for wu %s" % jobs[1]).encode()
    e.run()
    j = e.job(jobs[0])
    assert j["status"] == "ERROR" and j["error_mask"] == 10     # too many errors + total
    r = e.get_output(cmd="workunit_file", auth_str=a, wu_name=jobs[0], file_num=0)
    assert r.body == ("ERROR: no canonical result for wu %s" % jobs[0]).encode()
    # fixed server (quirk qcj-stock off): error_resultid, exit status and wrapped stderr
    e.set_quirks("php-warnings")
    r = e.rpc(xml_simple("query_completed_job", a, job_name=jobs[0]))
    t = r.text
    assert "<error_mask>10</error_mask>" in t and "<error_resultid>" in t
    assert "<exit_status>3</exit_status>" in t
    assert "&lt;message&gt;\nprocess exited with code 3 (0x3, -253)&lt;/message&gt;" in t
    assert "exiting with code 3 as requested" in t
    assert t.endswith("   ]]></stderr_out>\n</completed_job>\n        </query_completed_job>\n    ")
    r = e.rpc(xml_simple("query_completed_job", a, job_name=jobs[1]))
    assert r.text.endswith("<query_completed_job>\n<completed_job>\n   <error_mask>16</error_mask>\n"
                           "</completed_job>\n        </query_completed_job>\n    ")
    r = e.rpc(xml_simple("query_completed_job", a, job_name="no_such_job"))
    assert error_msg(r.body) == "no such job"
    # stock server quirk: truncated fatal reply for jobs without canonical result
    e.set_quirks("php-warnings,qcj-stock")
    r = e.rpc(xml_simple("query_completed_job", a, job_name=jobs[0]))
    assert r.text.endswith("on line <b>67</b><br />\n")
    assert "<error_mask>10</error_mask>\n<br />\n<b>Warning</b>:  Undefined variable $job_id" in r.text
    assert "</query_completed_job>" not in r.text


def test_query_completed_job_done(e):
    a = e.authenticator
    job = done_job(e)
    r = e.rpc(xml_simple("query_completed_job", a, job_name=job))
    t = r.text
    assert re.search(r"<completed_job>\n   <error_mask>0</error_mask>\n   <canonical_resultid>\d+"
                     r"</canonical_resultid>\n   <exit_status>0</exit_status>\n   <elapsed_time>[0-9.e-]+"
                     r"</elapsed_time>\n   <cpu_time>[0-9.e-]+</cpu_time>\n   <stderr_out><!\[CDATA\[\n\n"
                     r"&lt;core_client_version&gt;7.20.5&lt;/core_client_version&gt;\n&lt;!\[CDATA\[\n"
                     r"&lt;stderr_txt&gt;\n.*app started.*called boinc_finish\(0\)\n\n&lt;/stderr_txt&gt;\n"
                     r"\]\]&gt;\n   \]\]></stderr_out>\n</completed_job>\n", t, re.S)
    e.set_quirks("qcj-stock")       # done jobs work on a stock server too
    assert "<canonical_resultid>" in e.rpc(xml_simple("query_completed_job", a, job_name=job)).text


def test_result_file_and_other_apps(e):
    a = e.authenticator
    job = done_job(e, "twoinout", (b"1 2 3\n", b"4.5\n"))
    r = e.get_output(cmd="workunit_file", auth_str=a, wu_name=job, file_num=0)
    assert r.body == b"10.5\n"
    r = e.get_output(cmd="workunit_file", auth_str=a, wu_name=job, file_num=1)
    assert b"sum: 10.5" in r.body
    inst = e.job(job)["instances"][0]["name"]
    good = hashlib.md5((a + inst).encode()).hexdigest()
    r = e.get_output(cmd="result_file", result_name=inst, file_num=0, auth_str=good)
    assert r.body == b"10.5\n"
    r = e.get_output(cmd="result_file", result_name=inst, file_num=0, auth_str=a)
    assert r.body == b"ERROR: bad auth str"
    zjob = done_job(e, "zipout", (b"Hello Zip\n",))
    r = e.get_output(cmd="workunit_file", auth_str=a, wu_name=zjob, file_num=0)
    z = zipfile.ZipFile(io.BytesIO(r.body))
    assert sorted(z.namelist()) == ["info.txt", "lower.txt", "upper.txt"]
    assert z.read("upper.txt") == b"HELLO ZIP\n" and z.read("lower.txt") == b"hello zip\n"
    fjob = done_job(e, "failer", (b"copy me\n",))
    assert e.get_output(cmd="workunit_file", auth_str=a, wu_name=fjob, file_num=0).body == b"copy me\n"


def test_project_url_errors(e):
    r = e.request("POST", "/emusubmit_rpc_handler.php", b"")
    assert r.status == 403 and b"<title>403 Forbidden</title>" in r.body
    assert r.headers["content-type"] == "text/html; charset=iso-8859-1"
    r = e.request("POST", "/emu/nonexistent_rpc.php", b"")
    assert r.status == 404 and len(r.body) == 236
