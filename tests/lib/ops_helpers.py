"""Helpers of tests/e2e_ops/test_operator_*.py, test_check_config.py and
test_logging.py: run boinc_gahp once, as an operator would, with a clean
environment (no machine settings leak in) and a private HOME."""
import os
import subprocess

from gahp_client import gahp_binary


def clean_env(home, extra=None):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("BOINC_GAHP_", "XDG_"))}
    env["HOME"] = str(home)
    env["BOINC_GAHP_CONFIG"] = "/dev/null"
    env.update(extra or {})
    return env


def run(home, *args, env=None, stdin=b"", timeout=60):
    """One boinc_gahp run to its end: CompletedProcess with bytes."""
    return subprocess.run([gahp_binary()] + list(args), input=stdin,
                          capture_output=True, env=clean_env(home, env), timeout=timeout)
