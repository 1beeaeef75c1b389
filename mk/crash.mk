# mk/crash.mk - the crash-state explorer (issue 21; doc/recovery.md, "Power
# loss"): an LD_PRELOAD recorder of boinc_gahp's file-system operations, and
# tests/crash_states/explore.py, which replays what a power loss may leave
# and checks recovery on each state.  Not part of `make check`.
# CRASH_STATES_MAX (states per workload) and CRASH_STATES_SEED sample it;
# CRASH_STATES_JOBS workloads run at once (default: one per CPU);
# the server's environment (e.g. BOINC_GAHP_SYNC=normal) is passed through.

CRASH_RECORDER := $(BUILD)/crash_states/librecorder.so

$(CRASH_RECORDER): tests/crash_states/recorder.c
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -Wall -Wextra -Werror -Wshadow -O2 -g -fPIC -shared -pthread \
	  -o $@ $< -ldl

check-crash-states: all $(CRASH_RECORDER)
	BOINC_GAHP=$(CURDIR)/$(BUILD)/boinc_gahp BOINC_EMU=$(CURDIR)/$(BUILD)/boinc_emu \
	  /usr/bin/python3 tests/crash_states/explore.py

.PHONY: check-crash-states
