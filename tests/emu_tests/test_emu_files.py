"""job_file.php: query_files / upload_files, immutability, and the fatal
duplicate-row cases of a real server (captures 22-33, 90)."""

import emu
from emu import error_msg, tag_value, xml_create_batch, xml_simple

HDR = b'<?xml version="1.0" encoding="ISO-8859-1" ?>\n'
ALPHA, BETA, GAMMA = b"SAMPLE BATCH INPUT alpha\n", b"beta input\n", b"gamma\n"


def new_batch(e, name="fb"):
    return int(tag_value(e.rpc(xml_create_batch(e.authenticator, name)).body, "batch_id"))


def err_reply(tag, msg):
    return (HDR + b"<%s>\n<error>\n    <error_num>-1</error_num>\n    <error_msg>%s</error_msg>\n"
            b"</error>\n</%s>\n" % (tag.encode(), msg.encode(), tag.encode()))


def test_query_and_upload(e):
    a = e.authenticator
    bid = new_batch(e)
    names = [emu.phys_name(x) for x in (ALPHA, BETA, GAMMA)]
    r = e.job_file(xml_simple("upload_files", a, phys_name=names[0]), [ALPHA])
    assert r.body == HDR + b"<upload_files>\n<success/>\n        </upload_files>\n    "
    r = e.job_file(xml_simple("query_files", a, batch_id=bid, phys_name=names))
    assert r.body == HDR + (b"<query_files>\n<absent_files>\n<file>1</file>\n<file>2</file>\n"
                            b"</absent_files>\n        </query_files>\n    ")
    r = e.job_file(xml_simple("upload_files", a, batch_id=bid, phys_name=names[1:]), [BETA, GAMMA])
    assert b"<success/>" in r.body
    c = e.counters()
    assert c["uploads_by_name"] == {n: 1 for n in names}
    assert c["files_uploaded"] == 3 and c["bytes_uploaded"] == len(ALPHA + BETA + GAMMA)
    assert sorted(e.state()["files"]) == sorted(names)
    assert (e.state_dir / "download" / names[1]).read_bytes() == BETA
    # without batch_id query_files just answers, also for present files
    r = e.job_file(xml_simple("query_files", a, phys_name=[names[0], "f" * 32]))
    assert r.body == HDR + b"<query_files>\n<absent_files>\n<file>1</file>\n</absent_files>\n        </query_files>\n    "
    r = e.job_file(xml_simple("query_files", a, phys_name=[names[0], "f" * 32]))
    assert b"<file>1</file>" in r.body
    # nothing to upload: harmless
    r = e.job_file(xml_simple("upload_files", a, batch_id=bid))
    assert r.body == HDR + b"<upload_files>\n<success/>\n        </upload_files>\n    "
    assert e.counters()["rpc"]["query_files"] == 3


def test_name_not_checked_against_content(e):
    bid = new_batch(e)
    r = e.job_file(xml_simple("upload_files", e.authenticator, batch_id=bid,
                              phys_name="0" * 32 + ".txt"), [GAMMA])
    assert b"<success/>" in r.body


def test_fatal_duplicates(e):
    a = e.authenticator
    bid = new_batch(e)
    n = emu.phys_name(ALPHA)
    assert b"<success/>" in e.job_file(xml_simple("upload_files", a, batch_id=bid, phys_name=n), [ALPHA]).body
    # same content again: duplicate job_file row, reply cut off
    r = e.job_file(xml_simple("upload_files", a, batch_id=bid, phys_name=n), [ALPHA])
    assert r.status == 200 and r.text.startswith('<?xml version="1.0" encoding="ISO-8859-1" ?>\n<upload_files>\n<br />\n<b>Fatal error</b>')
    assert ("Duplicate entry '%s' for key 'jf_name'" % n) in r.text
    assert "</upload_files>" not in r.text and "<error>" not in r.text
    assert e.counters()["uploads_by_name"][n] == 2
    # query_files twice with the same batch for a present file
    bid2 = new_batch(e, "fb2")
    r = e.job_file(xml_simple("query_files", a, batch_id=bid2, phys_name=n))
    assert b"<absent_files>\n</absent_files>" in r.body
    r = e.job_file(xml_simple("query_files", a, batch_id=bid2, phys_name=n))
    assert "for key 'job_file_id'" in r.text and "</query_files>" not in r.text
    # the same existing file twice in one call
    bid3 = new_batch(e, "fb3")
    r = e.job_file(xml_simple("query_files", a, batch_id=bid3, phys_name=[n, n]))
    assert "<b>Fatal error</b>" in r.text and "<absent_files>" not in r.text


def test_immutability_and_errors(e):
    a = e.authenticator
    bid = new_batch(e)
    n = emu.phys_name(BETA)
    e.job_file(xml_simple("upload_files", a, batch_id=bid, phys_name=n), [BETA])
    r = e.job_file(xml_simple("upload_files", a, batch_id=bid, phys_name=n), [b"other content"])
    assert r.body == err_reply("upload_files", "file immutability violation for " + n)
    assert (e.state_dir / "download" / n).read_bytes() == BETA
    r = e.job_file(xml_simple("upload_files", a, phys_name="../evil.txt"), [GAMMA])
    assert r.body == err_reply("upload_files", "bad filename")
    r = e.job_file(xml_simple("query_files", a, phys_name="../../etc/passwd"))
    assert r.body == err_reply("query_files", "bad filename")
    r = e.job_file(xml_simple("upload_files", a, phys_name=["aaaa.txt", "bbbb.txt"]), [GAMMA])
    assert r.body == err_reply("upload_files", "# of uploaded files (1) doesn't agree with request (2)")
    r = e.job_file(xml_simple("delete_files", a))
    assert r.body == HDR + b"<error>\n    <error_num>-1</error_num>\n    <error_msg>no such action</error_msg>\n</error>\n"
    r = e.job_file(xml_simple("query_files", "deadbeefdeadbeefdeadbeefdeadbeef", phys_name=n))
    assert r.body == err_reply("query_files", "bad authenticator")
    r = e.job_file(xml_simple("query_files", e.users()["nosubmit_user"], phys_name=n))
    assert error_msg(r.body) == "no file access"
    r = e.job_file("<query_files>\n</query_files>\n")
    assert error_msg(r.body) == "no authenticator"


def test_post_max_size(e):
    a = e.authenticator
    bid = new_batch(e)
    assert e.set_post_max_bytes(2000)["post_max_bytes"] == 2000
    big = b"x" * 5000
    n = emu.phys_name(big)
    r = e.job_file(xml_simple("upload_files", a, batch_id=bid, phys_name=n), [big])
    assert r.text.startswith("<br />\n<b>Warning</b>:  PHP Request Startup: POST Content-Length of ")
    assert "exceeds the limit of 2000 bytes" in r.text
    assert error_msg(r.body) == "can't parse request message: "
    assert n not in e.state()["files"]
    small = b"y" * 100
    r = e.job_file(xml_simple("upload_files", a, batch_id=bid, phys_name=emu.phys_name(small)), [small])
    assert b"<success/>" in r.body
    e.set_post_max_bytes(0)
    r = e.job_file(xml_simple("upload_files", a, batch_id=bid, phys_name=n), [big])
    assert b"<success/>" in r.body


def test_parts_written_before_the_script_and_cleaned_up(e):
    """PHP writes each file part to its upload_tmp_dir before the script
    runs and deletes what the script did not move; the emulator does the
    same (state-dir/php_tmp), outside its state lock, so that parallel
    uploads write their files in parallel as a real server's do."""
    import threading
    a = e.authenticator
    bid = new_batch(e)
    contents = [[b"parallel %d %d\n" % (k, i) for i in range(15)] for k in range(3)]
    replies = [None] * 3

    def post(k):
        names = [emu.phys_name(x) for x in contents[k]]
        replies[k] = e.job_file(xml_simple("upload_files", a, batch_id=bid, phys_name=names),
                                contents[k])

    threads = [threading.Thread(target=post, args=(k,)) for k in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(b"<success/>" in r.body for r in replies), replies
    for data in (x for c in contents for x in c):
        assert (e.state_dir / "download" / emu.phys_name(data)).read_bytes() == data
    assert e.counters()["files_uploaded"] == 45
    # a refused part (immutability) and a refused request leave nothing behind
    n = emu.phys_name(contents[0][0])
    r = e.job_file(xml_simple("upload_files", a, batch_id=bid, phys_name=n), [b"other"])
    assert r.body == err_reply("upload_files", "file immutability violation for " + n)
    r = e.job_file(xml_simple("upload_files", a, phys_name=["aaaa.txt", "bbbb.txt"]), [GAMMA])
    assert b"doesn't agree" in r.body
    assert list((e.state_dir / "php_tmp").iterdir()) == []
