-- 0014_request_args_prefix (issue 22): re-issued requests are found through
-- an index of their command and the first 64 characters of their
-- arguments, not of the whole arguments.  requests_command_args held a
-- copy of every request's text as its key: a 10,000-job submit's 1.3 MB
-- was written twice at accept, before its "S" (an insert took 10 to 13 ms
-- with that key, 5 ms without), and the journal held it twice until the
-- prune compacted it.  The statements that match a re-issue compare the
-- prefix (through this index) and then the whole text.
DROP INDEX requests_command_args;
CREATE INDEX requests_command_args_prefix ON requests (command, substr(args, 1, 64));
