"""submit_rpc_handler.php: every RPC with good and bad requests, compared
byte for byte with replies captured from a real BOINC 8.3 server where the
reply is deterministic."""

import re

import emu
from emu import error_msg, tag_value, xml_create_batch, xml_query_batch2, xml_simple

HDR = b'<?xml version="1.0" encoding="ISO-8859-1" ?>\n'


def err_reply(tag, msg):
    return (HDR + b"<%s>\n<error>\n    <error_num>-1</error_num>\n    <error_msg>%s</error_msg>\n"
            b"</error>\n</%s>\n" % (tag.encode(), msg.encode(), tag.encode()))


def test_ping_exact(e):
    r = e.rpc("<ping> </ping>\n")
    assert r.status == 200
    assert r.headers["content-type"] == "text/xml;charset=UTF-8"
    assert r.body == HDR + b"<ping>\n<success>1</success>\n        </ping>\n    "


def test_first_line_and_users(e):
    assert re.fullmatch(r"http://127\.0\.0\.1:\d+/emu/", e.url)
    assert re.fullmatch(r"[0-9a-f]{32}", e.authenticator)
    assert e.control_url == e.url.replace("/emu/", "/control/")
    users = e.users()
    assert users["emu_user"] == e.authenticator
    assert len({users["emu_user"], users["nosubmit_user"], users["other_user"]}) == 3


UPPERCASE_TEMPLATES = b"""<templates>
<input_template>
    <file_info>
        <number>0</number>
    </file_info>
    <workunit>
        <file_ref>
            <file_number>0</file_number>
            <open_name>in</open_name>
            <copy_file/>
        </file_ref>
        <target_nresults>1</target_nresults>
        <min_quorum>1</min_quorum>
        <max_error_results>1</max_error_results>
        <max_total_results>2</max_total_results>
        <max_success_results>1</max_success_results>
        <rsc_fpops_est>1e9</rsc_fpops_est>
        <rsc_fpops_bound>1e13</rsc_fpops_bound>
        <rsc_memory_bound>1e8</rsc_memory_bound>
        <rsc_disk_bound>1e8</rsc_disk_bound>
        <delay_bound>600</delay_bound>
    </workunit>
</input_template>

<output_template>
    <file_info>
        <name><OUTFILE_0/></name>
        <generated_locally/>
        <upload_when_present/>
        <max_nbytes>5000000</max_nbytes>
        <url><UPLOAD_URL/></url>
    </file_info>
    <result>
        <file_ref>
            <file_name><OUTFILE_0/></file_name>
            <open_name>out</open_name>
        </file_ref>
    </result>
</output_template>

</templates>
"""


def test_get_templates(e):
    a = e.authenticator
    r = e.rpc(xml_simple("get_templates", a, app_name="uppercase"))
    assert r.body == HDR + b"<get_templates>\n" + UPPERCASE_TEMPLATES + b"        </get_templates>\n    "
    assert len(r.body) == 1232     # Content-Length of the real capture
    r = e.rpc(xml_simple("get_templates", a, app_name="twoinout"))
    opens = re.findall(r"<open_name>(.*?)</open_name>", r.text)
    assert opens == ["a", "b", "sum", "log"]
    r = e.rpc(xml_simple("get_templates", a, app_name="nosuchapp"))
    assert r.body == err_reply("get_templates", "app not found: nosuchapp")
    r = e.rpc(xml_simple("get_templates", a, job_name="nosuchjob"))
    assert r.body == err_reply("get_templates", "job not found: nosuchjob")
    r = e.rpc(xml_simple("get_templates", "deadbeefdeadbeefdeadbeefdeadbeef", app_name="uppercase"))
    assert r.body == err_reply("get_templates", "bad authenticator")
    emu.submit(e, a, "tb", "uppercase", [[b"x"]])
    r = e.rpc(xml_simple("get_templates", a, job_name="tb_job0"))
    assert UPPERCASE_TEMPLATES in r.body


def test_bad_command_unparseable_empty(e):
    r = e.rpc(xml_simple("frobnicate", e.authenticator))
    assert r.body == HDR + b"<error>\n    <error_num>-1</error_num>\n    <error_msg>bad command</error_msg>\n</error>\n"
    r = e.rpc("this is not xml <<<\n")
    assert r.status == 200
    assert b"<b>Warning</b>:  simplexml_load_string()" in r.body
    assert error_msg(r.body) == "can't parse request message: this is not xml &lt;&lt;&lt;\n"
    assert not r.text.rstrip().endswith("</ping>")
    r = e.post_form("submit_rpc_handler.php", {})
    assert r.body == HDR + (b"<error>\n    <error_num>-1</error_num>\n    <error_msg>can't parse request "
                            b"message: </error_msg>\n</error>\n")
    assert e.counters()["rpc"]["other"] >= 3


def test_authentication_and_permissions(e):
    users = e.users()
    nosub, other = users["nosubmit_user"], users["other_user"]
    r = e.rpc("<query_batches>\n</query_batches>\n")
    assert r.body == err_reply("query_batches", "no authenticator")
    r = e.rpc(xml_simple("query_batches", "deadbeefdeadbeefdeadbeefdeadbeef"))
    assert r.body == err_reply("query_batches", "bad authenticator")
    r = e.rpc(xml_create_batch(nosub, "nosubmit_batch"))
    assert r.body == err_reply("create_batch", "no submit access")
    r = e.rpc(xml_simple("query_batches", nosub))
    assert r.body == err_reply("query_batches", "no file access")
    bid, jobs = emu.submit(e, e.authenticator, "mine", "uppercase", [[b"a"]])
    r = e.rpc(xml_simple("abort_jobs", nosub, job_name=jobs[0]))
    assert r.body == err_reply("abort_jobs", "no file access")
    r = e.rpc(xml_query_batch2(other, ["mine"]))
    assert error_msg(r.body) == "not owner of mine"
    r = e.rpc(xml_simple("abort_jobs", other, job_name=jobs[0]))
    assert error_msg(r.body) == "not owner"
    r = e.rpc(xml_simple("retire_batch", other, batch_id=bid))
    assert error_msg(r.body) == "not owner of batch"
    r = e.rpc(emu.xml_submit_batch(other, bid, "uppercase", [("x1", [], None)]))
    assert error_msg(r.body) in ("not owner of batch",)


def test_create_batch_duplicate_names_and_autoname(e):
    a = e.authenticator
    r1 = e.rpc(xml_create_batch(a, "samplebatch1", expire_time=1795338138))
    r2 = e.rpc(xml_create_batch(a, "samplebatch1", expire_time=1795338138))
    id1, id2 = int(tag_value(r1.body, "batch_id")), int(tag_value(r2.body, "batch_id"))
    assert id2 == id1 + 1
    assert r1.body == HDR + b"<create_batch>\n<batch_id>%d</batch_id>\n        </create_batch>\n    " % id1
    assert e.counters()["batches_by_name"]["samplebatch1"] == 2
    # lookups by name find the OLDEST batch: its jobs, not the new one's
    names = emu.stage_files(e, a, id2, [b"data"])
    r = e.rpc(emu.xml_submit_batch(a, id2, "uppercase", [("newjob", names, None)]))
    assert tag_value(r.body, "batch_id") == str(id2)
    r = e.rpc(xml_query_batch2(a, ["samplebatch1"]))
    assert tag_value(r.body, "batch_size") == "0"
    r = e.rpc(xml_create_batch(a, ""))
    bid = int(tag_value(r.body, "batch_id"))
    assert [b["name"] for b in e.state()["batches"] if b["id"] == bid] == ["batch_%d" % bid]
    r = e.rpc(xml_create_batch(a, "x", app="nosuchapp"))
    assert error_msg(r.body) == "app not found: nosuchapp"


def test_submit_batch_errors(e):
    a = e.authenticator
    bid, jobs = emu.submit(e, a, "sb1", "uppercase", [[b"alpha\n"], [b"beta\n"]])
    names = [emu.phys_name(b"alpha\n")]
    r = e.rpc(emu.xml_submit_batch(a, bid, "uppercase", [("sb1_again", names, None)]))
    assert r.body == err_reply("submit_batch", "batch not in init state")
    r = e.rpc(xml_create_batch(a, "sb6"))
    b6 = int(tag_value(r.body, "batch_id"))
    r = e.rpc(emu.xml_submit_batch(a, b6, "uppercase", [("sb_noinput", [], None)]))
    assert r.body == err_reply("submit_batch", "wrong # of input files for job 0: need 1, got 0")
    r = e.rpc(emu.xml_submit_batch(a, 999, "uppercase", [("sb_x", names, None)]))
    assert r.body == err_reply("submit_batch", "no batch 999")
    r = e.rpc(emu.xml_submit_batch(a, b6, "nosuchapp", [("sb_y", names, None)]))
    assert r.body == err_reply("submit_batch", "app not found: nosuchapp")
    r = e.rpc(emu.xml_submit_batch(a, b6, "uppercase", [("sb6_ok1", names, None),
                                                        ("sb6_missing", ["1" * 32 + ".txt"], None)]))
    msg = error_msg(r.body)
    assert msg.startswith("create_work failed: md5_file: can't open ") and "\n" in msg
    # duplicate job name: the whole submit fails with raw, unescaped markup
    r = e.rpc(emu.xml_submit_batch(a, b6, "uppercase", [("sb6_new1", names, None),
                                                        (jobs[0], names, None)]))
    msg = error_msg(r.body)
    assert msg.startswith("create_work failed: Database error: Duplicate entry '%s' for key 'name'" % jobs[0])
    assert "<file_info>" in msg and msg.count("\n") > 5
    assert "sb6_new1" not in e.counters()["jobs_by_name"]
    # batch 6 is still in INIT state: a correct submit works
    r = e.rpc(emu.xml_submit_batch(a, b6, "uppercase", [("sb6_new1", names, None)]))
    assert tag_value(r.body, "batch_id") == str(b6)
    # batch_id 0: the server creates the batch
    r = e.rpc(emu.xml_submit_batch(a, 0, "uppercase", [("auto1", names, None)], batch_name="autob"))
    assert int(tag_value(r.body, "batch_id")) > b6
    assert e.counters()["batches_by_name"]["autob"] == 1


def test_query_batch2(e):
    a = e.authenticator
    emu.submit(e, a, "q1", "uppercase", [[b"1"], [b"2"]])
    emu.submit(e, a, "q2", "uppercase", [[b"3"]])
    r = e.rpc(xml_query_batch2(a, ["q1", "q2"]))
    assert re.fullmatch(
        r'<\?xml version="1.0" encoding="ISO-8859-1" \?>\n<query_batch2>\n<server_time>\d+(\.\d+)?</server_time>\n'
        r"   <batch_size>2</batch_size>\n(    <job>\n        <job_name>q1_job\d</job_name>\n"
        r"        <status>UNSENT</status>\n    </job>\n){2}   <batch_size>1</batch_size>\n"
        r"(    <job>\n.*?</job>\n)</query_batch2>\n", r.text, re.S)
    r = e.rpc(xml_query_batch2(a, ["q1", "no_such_batch"]))
    assert r.body == err_reply("query_batch2", "no batch named no_such_batch")
    t0 = float(tag_value(r.body, "server_time") or e.time())
    e.advance(5)
    r = e.rpc(xml_query_batch2(a, ["q1"]))
    st = dict(emu.job_statuses(r.body))
    assert set(st.values()) <= {"DONE", "IN_PROGRESS"}
    e.run(3600)
    server_time = float(tag_value(e.rpc(xml_query_batch2(a, ["q1"])).body, "server_time"))
    assert server_time >= t0
    r = e.rpc(xml_query_batch2(a, ["q1", "q2"], min_mod_time=server_time))
    assert re.findall(r"<batch_size>(\d+)</batch_size>", r.text) == ["0", "0"]
    # an abort in the same second as server_time: the transitioner touches
    # the job one second later, so a query since server_time sees it then
    e.rpc(xml_simple("abort_jobs", a, job_name="q2_job0"))
    e.advance(2)
    r = e.rpc(xml_query_batch2(a, ["q1", "q2"], min_mod_time=server_time))
    assert re.findall(r"<batch_size>(\d+)</batch_size>", r.text) == ["0", "1"]


def test_query_batches_query_batch_php_warnings(e):
    a = e.authenticator
    bid, jobs = emu.submit(e, a, "samplebatch1", "uppercase", [[b"x"], [b"y"]])
    r = e.rpc(xml_simple("query_batches", a))
    assert r.text.count("<b>Deprecated</b>:  Creation of dynamic property BoincBatch::$njobs_success") == 1
    assert "<name>samplebatch1</name>" in r.text and "<state>1</state>" in r.text
    assert r.text.endswith("   </batch>\n</query_batches>\n")
    r = e.rpc(xml_simple("query_batch", a, batch_name="samplebatch1", get_job_details=1))
    assert "<b>Deprecated</b>" in r.text
    assert r.text.count("<status>queued</status>") == 2
    assert "<canonical_instance_id>0</canonical_instance_id>" in r.text
    r = e.rpc(xml_simple("query_batch", a, batch_name="nope"))
    assert error_msg(r.body) == "no such batch"
    e.set_quirks("none")
    r = e.rpc(xml_simple("query_batches", a))
    assert "<b>" not in r.text
    e.run()
    r = e.rpc(xml_simple("query_batch", a, batch_id=bid, get_job_details=1))
    assert r.text.count("<n_outfiles>1</n_outfiles>") == 2
    assert "<state>2</state>" in r.text


def test_abort_jobs(e):
    a = e.authenticator
    bid, jobs = emu.submit(e, a, "ab", "uppercase", [[b"1"], [b"2"], [b"3"]])
    r = e.rpc(xml_simple("abort_jobs", a, job_name=jobs[2]))
    assert r.body == HDR + b"<abort_jobs>\n<aborted %s>\n<success>1</success>\n        </abort_jobs>\n    " % jobs[2].encode()
    r = e.rpc(xml_simple("abort_jobs", a, job_name="no_such_job"))
    assert r.body == err_reply("abort_jobs", "no job no_such_job")
    r = e.rpc(xml_query_batch2(a, ["ab"]))
    assert emu.job_statuses(r.body) == [(jobs[0], "UNSENT"), (jobs[1], "UNSENT"), (jobs[2], "ERROR")]
    e.run()
    st = dict(emu.job_statuses(e.rpc(xml_query_batch2(a, ["ab"])).body))
    assert st == {jobs[0]: "DONE", jobs[1]: "DONE", jobs[2]: "ERROR"}
    assert e.job(jobs[2])["error_mask"] & 16


def test_abort_batch(e):
    a = e.authenticator
    bid, jobs = emu.submit(e, a, "abb", "uppercase", [[b"1"], [b"2"]])
    r = e.rpc(xml_simple("abort_batch", a, batch_id=bid))
    assert r.body == HDR + b"<abort_batch>\n<success>1</success>\n        </abort_batch>\n    "
    st = dict(emu.job_statuses(e.rpc(xml_query_batch2(a, ["abb"])).body))
    assert set(st.values()) == {"ERROR"}


def test_retire_and_set_expire_time(e):
    a = e.authenticator
    bid, jobs = emu.submit(e, a, "samplebatch1", "uppercase", [[b"alpha"]])
    e.run()
    r = e.rpc(xml_simple("set_expire_time", a, batch_name="samplebatch1", expire_time="2000000000.000000"))
    assert r.body == HDR + b"<set_expire_time>\n<success>1</success></set_expire_time>\n"
    assert len(r.body) == 102
    r = e.rpc(xml_simple("set_expire_time", a, batch_name="samplebatch1", expire_time="2000000000.000000"))
    assert len(r.body) == 102
    assert [b["expire_time"] for b in e.state()["batches"]] == [2000000000.0]
    r = e.rpc(xml_simple("set_expire_time", a, batch_name="no_such_batch", expire_time=1))
    assert r.body == err_reply("set_expire_time", "no such batch")
    r = e.rpc(xml_simple("retire_batch", a, batch_name="samplebatch1"))
    assert len(r.body) == 473      # body of capture 83, warnings included
    assert r.text.endswith("<success>1</success>\n        </retire_batch>\n    ")
    r = e.rpc(xml_simple("retire_batch", a, batch_name="samplebatch1"))
    assert len(r.body) == 473
    r = e.rpc(xml_simple("retire_batch", a, batch_name="no_such_batch"))
    assert r.body == err_reply("retire_batch", "no such batch")
    r = e.rpc(xml_simple("retire_batch", a))
    assert r.body == err_reply("retire_batch", "batch not specified")
    r = e.rpc(xml_query_batch2(a, ["samplebatch1"]))
    assert emu.job_statuses(r.body) == [(jobs[0], "DONE")]
    assert e.state()["batches"][0]["retired"] is True
    r = e.get_output(cmd="workunit_file", auth_str=a, wu_name=jobs[0], file_num=0)
    assert r.body == b"ALPHA"
    # retired batches are not listed by query_batches
    assert "<batch>" not in e.rpc(xml_simple("query_batches", a)).text


def test_expire_time_passes(e):
    a = e.authenticator
    r = e.rpc(xml_create_batch(a, "exp", expire_time=e.time() + 100))
    bid = int(tag_value(r.body, "batch_id"))
    names = emu.stage_files(e, a, bid, [b"z"])
    e.behaviour("exp1", "no_reply")
    e.rpc(emu.xml_submit_batch(a, bid, "uppercase", [("exp1", names, None)]))
    e.advance(150)
    b = e.state()["batches"][0]
    assert b["retired"] is True
    assert e.job("exp1")["status"] == "ERROR"


def test_estimate_batch(e):
    r = e.rpc("<estimate_batch>\n<authenticator>%s</authenticator>\n<batch>\n<app_name>uppercase</app_name>\n"
              "<job>\n</job>\n</batch>\n</estimate_batch>\n" % e.authenticator)
    assert tag_value(r.body, "seconds") is not None
