    .section .rodata
    .global migration_1
    .global migration_1_end
migration_1:
    .incbin "/work/main/migrations/0001_core.sql"
migration_1_end:
    .byte 0
    .global migration_2
    .global migration_2_end
migration_2:
    .incbin "/work/main/migrations/0002_recovery.sql"
migration_2_end:
    .byte 0
    .global migration_3
    .global migration_3_end
migration_3:
    .incbin "/work/main/migrations/0003_submit_states.sql"
migration_3_end:
    .byte 0
    .global migration_4
    .global migration_4_end
migration_4:
    .incbin "/work/main/migrations/0004_htcondor_fixes.sql"
migration_4_end:
    .byte 0
    .global migration_5
    .global migration_5_end
migration_5:
    .incbin "/work/main/migrations/0005_upload_limits.sql"
migration_5_end:
    .byte 0
    .global migration_6
    .global migration_6_end
migration_6:
    .incbin "/work/main/migrations/0006_url_password.sql"
migration_6_end:
    .byte 0
    .global migration_7
    .global migration_7_end
migration_7:
    .incbin "/work/main/migrations/0007_query_announcements.sql"
migration_7_end:
    .byte 0
    .global migration_8
    .global migration_8_end
migration_8:
    .incbin "/work/main/migrations/0008_status_changes.sql"
migration_8_end:
    .byte 0
    .section .data.rel.ro
    .balign 8
    .global migration_table
migration_table:
    .quad migration_1
    .quad migration_2
    .quad migration_3
    .quad migration_4
    .quad migration_5
    .quad migration_6
    .quad migration_7
    .quad migration_8
    .quad 0
    .section .note.GNU-stack,"",@progbits
