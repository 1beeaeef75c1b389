-- 0017_batch_may_pass (issue 39): whether a failed submit's last failure
-- was the project not answering (a connection or HTTP failure: it may
-- pass) rather than the server refusing something.  The BLAH dialect's
-- scheduler submits such a group again when the project answers, and its
-- jobs wait idle meanwhile: an outage of any length holds nothing
-- (doc/blah-core.md).  0 for every row before it: their failures stay
-- final, as they were.
ALTER TABLE batches ADD COLUMN may_pass INTEGER NOT NULL DEFAULT 0;
