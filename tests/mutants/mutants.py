"""The planted defects of make check-mutants (tests/mutants/run.py): each a
rewrite rule over one file (the text `old` must occur exactly once; it is
replaced by `new`) and the nets that should catch it, cheapest first.
A net is ("unit", "<binary in build/unit>"), ("pytest", "<pytest
arguments>") or ("crash", "<explorer workloads>").  Defects are realistic:
each is a mistake a change to that layer could make.  Issue 29's four
survivors are marked [issue 29 #N]."""

SWEEP = "tests/e2e_crash/test_fault_sweep.py"
LIMITS = "tests/e2e_hostile/test_limits.py"
CRASH = "tests/e2e_crash/test_crash.py"
ENGINE = ("unit", "test_submit_engine")


def m(name, file, old, new, *nets):
    return {"name": name, "file": file, "old": old, "new": new, "nets": list(nets)}


MUTANTS = [
    # ---- the journal
    m("journal: a failed write statement is swallowed [issue 29 #1]",
      "src/journal/journal.c",
      "    int result = rc == SQLITE_DONE ? 0 : injected != 0 ? -1 : fail(j, what_of(id));",
      "    int result = rc == SQLITE_DONE || !sqlite3_stmt_readonly(st) ? 0"
      " : injected != 0 ? -1 : fail(j, what_of(id));",
      ("pytest", SWEEP + "::test_fault_sweep_submit")),
    m("journal: connections at synchronous=NORMAL",
      "src/journal/journal.c",
      'j->sync_full ? "FULL" : "NORMAL"', '"NORMAL"',
      ("crash", "submit")),
    m("journal: a failed COMMIT taken for success",
      "src/journal/journal.c",
      "    int src = run_txn_stmt(j, JSTMT_COMMIT);\n",
      "    int src = run_txn_stmt(j, JSTMT_COMMIT);\n    src = SQLITE_OK;\n",
      ("pytest", SWEEP + "::test_fault_sweep_submit")),
    m("journal: a failed transaction body committed instead of rolled back",
      "src/journal/journal.c",
      "    int rc = fn(j, arg);\n    if (rc != 0) {\n        journal_rollback(j);\n        return rc;",
      "    int rc = fn(j, arg);\n    if (rc != 0) {\n        journal_commit(j);\n        return rc;",
      ("unit", "test_journal"), ("pytest", SWEEP)),
    m("journal: a read transaction whose COMMIT failed is left open",
      "src/journal/journal.c",
      "        run_txn_stmt(j, rc == 0 ? JSTMT_END_READ : JSTMT_ROLLBACK) != SQLITE_OK)\n"
      "        rollback_now(j);",
      "        run_txn_stmt(j, rc == 0 ? JSTMT_END_READ : JSTMT_ROLLBACK) != SQLITE_OK)\n"
      "        (void)0;",
      ("pytest", SWEEP + " -k read_commit")),
    m("journal: the checkpointer's connection at synchronous=OFF [issue 29 #2]",
      "src/journal/journal_checkpoint.c",
      "    sqlite3_busy_timeout(db, 1000);\n",
      "    sqlite3_busy_timeout(db, 1000);\n"
      "    (void)sqlite3_exec(db, \"PRAGMA synchronous=OFF\", NULL, NULL, NULL);\n",
      ("crash", "checkpoint")),
    m("journal: a negative schema version reaches the migration loop",
      "src/journal/journal.c",
      "    if (version < 0) {", "    if (version < 0 && version > 0) {",
      ("pytest", "tests/e2e_ops/test_retention.py -k out_of_range")),
    m("journal: migrations start one version late",
      "src/journal/journal.c",
      "    for (int n = version + 1; n <= MIGRATION_COUNT; n++) {",
      "    for (int n = version + 2; n <= MIGRATION_COUNT; n++) {",
      ("unit", "test_journal_retention")),
    m("journal: a journal one schema version newer is opened",
      "src/journal/journal.c",
      "    if (version > MIGRATION_COUNT) {", "    if (version > MIGRATION_COUNT + 1) {",
      ("unit", "test_journal_retention")),

    # ---- the protocol loop
    m("protocol: S answered for a burst whose commit failed",
      "src/server/protocol.c",
      '(committed ? "S" : "F")', '(committed || 1 ? "S" : "F")',
      ("pytest", SWEEP + "::test_fault_sweep_submit")),
    m("protocol: results marked delivered before RESULTS is written [issue 29 #3]",
      "src/server/protocol.c",
      "    gahp_result *list = p->w ? workers_take_results(p->w, &n) : NULL;\n",
      "    gahp_result *list = p->w ? workers_take_results(p->w, &n) : NULL;\n"
      "    for (gahp_result *q = list; q != NULL; q = q->next) {\n"
      "        long long row = q->request_row;\n"
      "        (void)journal_requests_delivered(p->j, &row, 1, journal_now());\n"
      "    }\n",
      ("pytest", CRASH + " -k never_saw")),
    m("protocol: request lines not bounded",
      "src/server/protocol.c",
      "line_reader_init(&p->lr, GAHP_MAX_LINE_BYTES);", "line_reader_init(&p->lr, 0);",
      ("pytest", LIMITS + " -k 1GB")),
    m("protocol: an overlong line's length counts only its kept tail",
      "src/server/protocol.c",
      "    *len = kind == 2 ? raw : end - lr->start;",
      "    *len = end - lr->start;",
      ("unit", "test_protocol")),
    m("protocol: an unknown command is accepted",
      "src/server/protocol.c",
      '        log_info("E: unknown command");\n        queue_line(p, "E", NULL, NULL);',
      '        log_info("E: unknown command");\n        queue_line(p, "S", NULL, NULL);',
      ("pytest", "tests/e2e_core/test_protocol_lines.py")),
    m("protocol: a pending request id may be reused",
      "src/server/protocol.c",
      "    if (idset_find(&p->pending, req->id) != NULL) {",
      "    if (idset_find(&p->pending, req->id) != NULL && 0) {",
      ("pytest", "tests/e2e_core/test_protocol_lines.py")),

    # ---- fetch and outputs
    m("fetch: SIGXFSZ kills the server",
      "src/main.c", "    signal(SIGXFSZ, SIG_IGN);\n", "",
      ("pytest", LIMITS + " -k file_size")),
    m("fetch: the template's max_nbytes ignored",
      "src/fetch/fetch.c",
      "        pf->max_nbytes = fetch_output_max_nbytes(t, i);",
      "        pf->max_nbytes = 0;",
      ("pytest", LIMITS + " -k max_nbytes")),
    m("fetch: max_nbytes off by one",
      "src/fetch/fetch.c",
      "p->max_nbytes < left ? p->max_nbytes : left;",
      "p->max_nbytes < left ? p->max_nbytes - 1 : left;",
      ("pytest", LIMITS + " -k max_nbytes")),
    m("fetch: the fetch's total limit not counted down",
      "src/fetch/fetch.c",
      "    long long left = fc->ctx->config->max_fetch_bytes - fc->fetched;",
      "    long long left = fc->ctx->config->max_fetch_bytes;",
      ("pytest", LIMITS + " -k fetch_total")),
    m("fetch: a failed download's temp file left behind",
      "src/fetch/fetch.c",
      "        outputs_abort_temp(p[i].fd, p[i].tmp);\n        p[i].fd = -1;",
      "        free(p[i].tmp);\n        p[i].fd = -1;",
      ("pytest", LIMITS + " -k endless_download")),
    m("fetch: zip members placed without a directory sync [issue 29 #4]",
      "src/fetch/fetch.c",
      "        outputs_sync_parent(dest);\n        outputs_sync_parent(src);\n",
      "",
      ("crash", "fetch_stderr_elsewhere")),
    m("fetch: the zip ratio guard dropped",
      "src/fetch/fetch.c",
      "    if (archive <= limit / cfg->max_unzip_ratio)\n        limit = archive * cfg->max_unzip_ratio;\n",
      "    (void)archive;\n",
      ("pytest", LIMITS + " -k zip_bomb")),
    m("outputs: an output file renamed into place without fsync",
      "src/fetch/outputs.c",
      "    if (fsync(fd) != 0) {\n        int err = errno;",
      "    if (0) {\n        int err = errno;",
      ("crash", "fetch")),
    m("outputs: a name with a slash is safe",
      "src/fetch/outputs.c",
      "    if (strchr(name, '/'))\n        return 0;\n", "",
      ("unit", "test_outputs"), ("pytest", "tests/e2e_cmds/test_fetch_hostile.py")),
    m("outputs: control characters in names",
      "src/fetch/outputs.c",
      "        if (*p < 0x20 || *p == 0x7f)", "        if (*p == 0x7f)",
      ("pytest", "tests/e2e_hostile/test_output_names.py")),
    m("boinc: a template's max_nbytes under a million ignored",
      "src/boinc/boinc_xml.c",
      'child_double(c, "max_nbytes", &d) == 1 && d >= 1)',
      'child_double(c, "max_nbytes", &d) == 1 && d >= 1e6)',
      ("pytest", LIMITS + " -k max_nbytes")),

    # ---- the submit engine
    m("engine: every reached failure taken as a refusal",
      "src/submit/engine.c",
      "    if (rc == BOINC_E_SERVER || rc == BOINC_E_IO)\n        return STEP_REFUSED;\n    return STEP_UNKNOWN;",
      "    return STEP_REFUSED;",
      ENGINE),
    m("engine: reached ignored",
      "src/submit/engine.c",
      "    if (!err->reached)\n        return STEP_NOT_SENT;\n",
      "    (void)err;\n",
      ENGINE),
    m("engine: a timeout taken for not sent",
      "src/submit/engine.c",
      "    if (!err->reached)\n        return STEP_NOT_SENT;",
      "    if (!err->reached || rc == BOINC_E_TRANSPORT)\n        return STEP_NOT_SENT;",
      ENGINE),
    m("engine: no settle look",
      "src/submit/engine.c",
      "        if (found != 0 || look == SETTLE_LOOKS)",
      "        if (1)",
      ENGINE),
    m("engine: an unknown outcome taken as done",
      "src/submit/engine.c",
      "    } else if (o == STEP_DONE) {",
      "    } else if (o == STEP_DONE || o == STEP_UNKNOWN) {",
      ENGINE),

    # ---- recovery
    m("recovery: undelivered results closed at start-up",
      "src/server/recovery.c",
      "    } else if (!unfinished && replayable) {",
      "    } else if (!unfinished && replayable && 0) {",
      ("pytest", CRASH)),
    m("recovery: unfinished submits closed instead of resumed",
      "src/server/recovery.c",
      "    } else if (unfinished && resumable && row->project_url != NULL) {",
      "    } else if (unfinished && resumable && row->project_url != NULL && 0) {",
      ("pytest", CRASH)),
    m("recovery: requeued results not queued",
      "src/server/recovery.c",
      "        if (workers_add_result(st->w, row->request_row, row->client_id,\n"
      "                               row->result ? row->result : \"NULL\") != 0 ||",
      "        if ((0 && workers_add_result(st->w, row->request_row, row->client_id,\n"
      "                               row->result ? row->result : \"NULL\") != 0) ||",
      ("pytest", CRASH + " -k requeue")),
    m("recovery: a requeued result's id not pending",
      "src/server/recovery.c",
      "                               row->result ? row->result : \"NULL\") != 0 ||\n"
      "            protocol_mark_pending(st->p, row->client_id) != 0)",
      "                               row->result ? row->result : \"NULL\") != 0)",
      ("pytest", CRASH + " -k requeue")),

    # ---- issue 42: behaviours no test pinned (each rule's net is its new test)
    m("log: a group-writable log file accepted",
      "src/base/log.c",
      "    if ((st->st_mode & 022) != 0)", "    if ((st->st_mode & 002) != 0)",
      ("pytest", "tests/e2e_ops/test_log_placement.py -k others_may_write")),
]
