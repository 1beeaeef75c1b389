build-fix/src/submit/submit.o: src/submit/submit.c src/exec/exec_cmds.h \
 src/exec/exec.h src/boinc/boinc.h src/wire/request.h src/config/config.h \
 src/base/log.h src/journal/journal.h src/base/files.h \
 src/wire/gahp_text.h src/base/strbuf.h src/submit/job_args.h \
 src/journal/journal_batches.h src/journal/batch_state.h \
 src/submit/submit_batch_steps.h src/submit/engine.h \
 src/submit/submit_deadline.h src/submit/submit_files.h \
 src/submit/submit_identity.h src/submit/submit_inputs.h \
 src/submit/submit_registry.h src/base/testpoint.h \
 src/submit/upload_limits.h
src/exec/exec_cmds.h:
src/exec/exec.h:
src/boinc/boinc.h:
src/wire/request.h:
src/config/config.h:
src/base/log.h:
src/journal/journal.h:
src/base/files.h:
src/wire/gahp_text.h:
src/base/strbuf.h:
src/submit/job_args.h:
src/journal/journal_batches.h:
src/journal/batch_state.h:
src/submit/submit_batch_steps.h:
src/submit/engine.h:
src/submit/submit_deadline.h:
src/submit/submit_files.h:
src/submit/submit_identity.h:
src/submit/submit_inputs.h:
src/submit/submit_registry.h:
src/base/testpoint.h:
src/submit/upload_limits.h:
