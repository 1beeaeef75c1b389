-- 0019_batch_error_msg (issue 39, one typed core): a failed batch's error
-- as plain text, beside batches.error (the 9.0 client's escaped result
-- token, kept as it was given).  The BLAH dialect's hold reasons and the
-- typed submit outcome read it; nothing in the process un-escapes
-- batches.error.  NULL wherever error is NULL, and on rows journaled before
-- this migration (their readers give a plain reason of their own).
ALTER TABLE batches ADD COLUMN error_msg TEXT;
