/*
 * fskind.h - is a directory on a network file system?  SQLite's WAL mode,
 * which the journal uses, needs shared memory and POSIX locks that a network
 * file system (NFS, SMB/CIFS, AFS, ...) does not give reliably, so the server
 * warns at start-up and --check-config reports it (doc/operating.md, "Home
 * directories on NFS").
 *
 * Interface:
 *   fskind_network_name(dir)       the network file system's name, or NULL
 *   fskind_network_name_of_magic() the same for a statfs f_type value
 */
#ifndef BOINC_GAHP_FSKIND_H
#define BOINC_GAHP_FSKIND_H

/* The name ("nfs", "cifs", ...) of the network file system dir is on, a
 * static string; NULL when it is local, or when statfs fails (the caller
 * finds that out when it opens the journal). */
const char *fskind_network_name(const char *dir);

/* The name of the network file system whose statfs f_type is magic, or NULL
 * for any other value.  Linux magic numbers (linux/magic.h and the file
 * systems' sources). */
const char *fskind_network_name_of_magic(unsigned long magic);

#endif
