"""A throw-away certificate authority for https tests, made with the
openssl command (Debian's openssl package): the CA, and server
certificates for 127.0.0.1 that are good, name another host, or have
expired.  Nothing here touches the system's trust store."""
import os
import subprocess


def _openssl(*args, cwd):
    subprocess.run(["openssl"] + list(args), cwd=cwd, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


class ScratchCA:
    """make(directory): ca.pem, ca.key; server(name, san, days) writes
    NAME.pem and NAME.key signed by the CA and returns their paths."""

    def __init__(self, directory):
        self.dir = str(directory)
        os.makedirs(self.dir, exist_ok=True)
        self.cert = os.path.join(self.dir, "ca.pem")
        _openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key",
                 "-out", "ca.pem", "-days", "2", "-subj", "/CN=boinc_gahp test CA",
                 "-addext", "basicConstraints=critical,CA:TRUE",
                 "-addext", "keyUsage=critical,keyCertSign,cRLSign", cwd=self.dir)

    def server(self, name, san="IP:127.0.0.1", days=2):
        """days < 0: a certificate that expired days ago."""
        with open(os.path.join(self.dir, name + ".ext"), "w") as f:
            f.write("subjectAltName=%s\nextendedKeyUsage=serverAuth\n" % san)
        _openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", name + ".key",
                 "-out", name + ".csr", "-subj", "/CN=%s" % name, cwd=self.dir)
        _openssl("x509", "-req", "-in", name + ".csr", "-CA", "ca.pem", "-CAkey", "ca.key",
                 "-CAcreateserial", "-out", name + ".pem", "-days", str(days),
                 "-extfile", name + ".ext", cwd=self.dir)
        return os.path.join(self.dir, name + ".pem"), os.path.join(self.dir, name + ".key")

    def hashed_dir(self):
        """A directory with the CA under its subject hash, for ca_path."""
        d = os.path.join(self.dir, "capath")
        os.makedirs(d, exist_ok=True)
        out = subprocess.run(["openssl", "x509", "-hash", "-noout", "-in", self.cert],
                             check=True, capture_output=True, text=True).stdout.strip()
        link = os.path.join(d, out + ".0")
        if not os.path.exists(link):
            os.symlink(self.cert, link)
        return d
