/*
 * fskind.c - network file system detection (fskind.h) with statfs(2).
 *
 * Only Linux reports a file system type this way; elsewhere nothing is
 * detected and the documentation's advice is all there is.
 */
#include "base/fskind.h"

#include <stddef.h>

#ifdef __linux__
#include <sys/vfs.h>
#endif

/* f_type values of file systems whose files live on another machine.  FUSE
 * is left out: it is as often local (a user's encrypted home) as remote. */
static const struct {
    unsigned long magic;
    const char *name;
} network_kinds[] = {
    { 0x6969UL, "nfs" },
    { 0x517BUL, "smb" },
    { 0xFF534D42UL, "cifs" },
    { 0xFE534D42UL, "smb2" },
    { 0x5346414FUL, "afs" },
    { 0x6B414653UL, "kafs" },
    { 0x73757245UL, "coda" },
    { 0x0BD00BD0UL, "lustre" },
    { 0x47504653UL, "gpfs" },
    { 0x00C36400UL, "ceph" },
    { 0x19830326UL, "fhgfs/beegfs" },
    { 0x013111A8UL, "ibrix" },
};

const char *fskind_network_name_of_magic(unsigned long magic)
{
    for (size_t i = 0; i < sizeof network_kinds / sizeof network_kinds[0]; i++)
        if (network_kinds[i].magic == magic)
            return network_kinds[i].name;
    return NULL;
}

const char *fskind_network_name(const char *dir)
{
#ifdef __linux__
    struct statfs st;
    if (statfs(dir, &st) != 0)
        return NULL;
    /* f_type is a signed word on some ABIs: keep its low 32 bits. */
    return fskind_network_name_of_magic((unsigned long)st.f_type & 0xFFFFFFFFUL);
#else
    (void)dir;
    return NULL;
#endif
}
