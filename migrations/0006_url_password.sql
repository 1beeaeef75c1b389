-- 0006_url_password (lane C, issue 10 #11): a password in a project URL
-- ("http://user:PASS@host/") is a secret like the authenticator.  From now
-- on projects.url, which the audit views show, holds the URL with the
-- password replaced by "***"; the password itself is kept here, for
-- recovery, in the private journal only (NULL when the URL has none).
ALTER TABLE projects ADD COLUMN url_password TEXT;

-- Rows written before: split them the same way (the user information ends
-- at the first '@' before the first '/' after "://").  OR IGNORE: a row
-- whose masked form would collide with another (same user, two passwords)
-- keeps its old form rather than stopping the migration.
UPDATE OR IGNORE projects SET
    url_password = substr(url, instr(url, '://') + 3 + instr(substr(url, instr(url, '://') + 3), ':'),
                          instr(substr(url, instr(url, '://') + 3), '@')
                          - instr(substr(url, instr(url, '://') + 3), ':') - 1),
    url = substr(url, 1, instr(url, '://') + 2 + instr(substr(url, instr(url, '://') + 3), ':'))
          || '***' || substr(url, instr(url, '://') + 2 + instr(substr(url, instr(url, '://') + 3), '@'))
WHERE url_password IS NULL
  AND instr(substr(url, instr(url, '://') + 3), '@') > 0
  AND instr(substr(url, instr(url, '://') + 3), '@') < instr(substr(url, instr(url, '://') + 3), '/')
  AND instr(substr(url, instr(url, '://') + 3), ':') > 0
  AND instr(substr(url, instr(url, '://') + 3), ':') < instr(substr(url, instr(url, '://') + 3), '@') - 1;
