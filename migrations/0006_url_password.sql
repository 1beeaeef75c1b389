-- 0006_url_password (lane C, issue 10 #11): a password in a project URL
-- ("http://user:PASS@host/") is a secret like the authenticator.  From now
-- on projects.url, which the audit views show, holds the URL with the
-- password replaced by "***"; the password itself is kept here, for
-- recovery, in the private journal only (NULL when the URL has none).
ALTER TABLE projects ADD COLUMN url_password TEXT;
