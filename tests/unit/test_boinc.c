/*
 * test_boinc.c - unit tests of the BOINC RPC client's pure parts: reply
 * parsers against the reply bodies of real BOINC server captures (PHP
 * warnings, truncated fatal errors, unescaped error text, stray <aborted>,
 * top-level <error>, CDATA stderr), request building and escaping, URL
 * normalisation, text squashing/unescaping, retry policy, argument
 * checks and the upload form's bytes.  No network: the transport is tested in test_boinc_emu.c.
 */
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "boinc/boinc.h"
#include "base/files.h"
#include "base/num.h"
#include "base/url.h"
#include "boinc/boinc_internal.h"

/* Reply bodies of real BOINC server captures (captured from a real server),
 * reproduced verbatim as fixtures: facts about the wire format. */

/* 01_ping.txt */
static const char R_PING[] =
    "<?xml version=\"1.0\" encoding=\"ISO-8859-1\" ?>\n"
    "<ping>\n"
    "<success>1</success>\n"
    "        </ping>\n"
    "    \n";

/* 02_get_templates_by_app.txt */
static const char R_TEMPLATES_BY_APP[] =
    "<?xml version=\"1.0\" encoding=\"ISO-8859-1\" ?>\n"
    "<get_templates>\n"
    "<templates>\n"
    "<input_template>\n"
    "    <file_info>\n"
    "        <number>0</number>\n"
    "    </file_info>\n"
    "    <workunit>\n"
    "        <file_ref>\n"
    "            <file_number>0</file_number>\n"
    "            <open_name>in</open_name>\n"
    "            <copy_file/>\n"
    "        </file_ref>\n"
    "        <target_nresults>1</target_nresults>\n"
    "        <min_quorum>1</min_quorum>\n"
    "        <max_error_results>1</max_error_results>\n"
    "        <max_total_results>2</max_total_results>\n"
    "        <max_success_results>1</max_success_results>\n"
    "        <rsc_fpops_est>1e9</rsc_fpops_est>\n"
    "        <rsc_fpops_bound>1e13</rsc_fpops_bound>\n"
    "        <rsc_memory_bound>1e8</rsc_memory_bound>\n"
    "        <rsc_disk_bound>1e8</rsc_disk_bound>\n"
    "        <delay_bound>600</delay_bound>\n"
    "    </workunit>\n"
    "</input_template>\n"
    "\n"
    "<output_template>\n"
    "    <file_info>\n"
    "        <name><OUTFILE_0/></name>\n"
    "        <generated_locally/>\n"
    "        <upload_when_present/>\n"
    "        <max_nbytes>5000000</max_nbytes>\n"
    "        <url><UPLOAD_URL/></url>\n"
    "    </file_info>\n"
    "    <result>\n"
    "        <file_ref>\n"
    "            <file_name><OUTFILE_0/></file_name>\n"
    "            <open_name>out</open_name>\n"
    "        </file_ref>\n"
    "    </result>\n"
    "</output_template>\n"
    "\n"
    "</templates>\n"
    "        </get_templates>\n"
    "    \n";

/* 04_get_templates_unknown_app.txt */
static const char R_TEMPLATES_UNKNOWN_APP[] =
    "<?xml version=\"1.0\" encoding=\"ISO-8859-1\" ?>\n"
    "<get_templates>\n"
    "<error>\n"
    "    <error_num>-1</error_num>\n"
    "    <error_msg>app not found: nosuchapp</error_msg>\n"
    "</error>\n"
    "</get_templates>\n"
    "\n";

/* 07_bad_command.txt */
static const char R_BAD_COMMAND[] =
    "<?xml version=\"1.0\" encoding=\"ISO-8859-1\" ?>\n"
    "<error>\n"
    "    <error_num>-1</error_num>\n"
    "    <error_msg>bad command</error_msg>\n"
    "</error>\n"
    "\n";

/* 08_unparseable_request.txt */
static const char R_UNPARSEABLE[] =
    "<?xml version=\"1.0\" encoding=\"ISO-8859-1\" ?>\n"
    "<br />\n"
    "<b>Warning</b>:  simplexml_load_string(): Entity: line 1: parser error : Start tag expected, '&lt;' not found in <b>/srv/boinc/projects/test/html/inc/util_basic.inc</b> on line <b>325</b><br />\n"
    "<br />\n"
    "<b>Warning</b>:  simplexml_load_string(): this is not xml &lt;&lt;&lt; in <b>/srv/boinc/projects/test/html/inc/util_basic.inc</b> on line <b>325</b><br />\n"
    "<br />\n"
    "<b>Warning</b>:  simplexml_load_string(): ^ in <b>/srv/boinc/projects/test/html/inc/util_basic.inc</b> on line <b>325</b><br />\n"
    "<error>\n"
    "    <error_num>-1</error_num>\n"
    "    <error_msg>can't parse request message: this is not xml &lt;&lt;&lt;\n"
    "</error_msg>\n"
    "</error>\n"
    "\n";

/* 13_no_request_field_empty_post.txt */
static const char R_EMPTY_POST[] =
    "<?xml version=\"1.0\" encoding=\"ISO-8859-1\" ?>\n"
    "<error>\n"
    "    <error_num>-1</error_num>\n"
    "    <error_msg>can't parse request message: </error_msg>\n"
    "</error>\n"
    "\n";

/* 20_create_batch.txt */
static const char R_CREATE_BATCH[] =
    "<?xml version=\"1.0\" encoding=\"ISO-8859-1\" ?>\n"
    "<create_batch>\n"
    "<batch_id>5</batch_id>\n"
    "        </create_batch>\n"
    "    \n";

/* 22_query_files_some_absent.txt */
static const char R_QUERY_FILES_SOME_ABSENT[] =
    "<?xml version=\"1.0\" encoding=\"ISO-8859-1\" ?>\n"
    "<query_files>\n"
    "<absent_files>\n"
    "<file>1</file>\n"
    "<file>2</file>\n"
    "</absent_files>\n"
    "        </query_files>\n"
    "    \n";

/* 23_upload_files_two_files.txt */
static const char R_UPLOAD_TWO[] =
    "<?xml version=\"1.0\" encoding=\"ISO-8859-1\" ?>\n"
    "<upload_files>\n"
    "<success/>\n"
    "        </upload_files>\n"
    "    \n";

/* 24_query_files_all_present.txt */
static const char R_QUERY_FILES_DUP_FATAL[] =
    "<?xml version=\"1.0\" encoding=\"ISO-8859-1\" ?>\n"
    "<query_files>\n"
    "<br />\n"
    "<b>Fatal error</b>:  Uncaught mysqli_sql_exception: Duplicate entry '1-5' for key 'job_file_id' in /srv/boinc/projects/test/html/inc/db_conn.inc:67\n"
    "Stack trace:\n"
    "#0 /srv/boinc/projects/test/html/inc/db_conn.inc(67): mysqli-&gt;query()\n"
    "#1 /srv/boinc/projects/test/html/inc/db_conn.inc(157): DbConn-&gt;do_query()\n"
    "#2 /srv/boinc/projects/test/html/inc/submit_db.inc(145): DbConn-&gt;insert()\n"
    "#3 /srv/boinc/projects/test/html/user/job_file.php(146): BoincBatchFileAssoc::insert()\n"
    "#4 /srv/boinc/projects/test/html/user/job_file.php(307): query_files()\n"
    "#5 {main}\n"
    "  thrown in <b>/srv/boinc/projects/test/html/inc/db_conn.inc</b> on line <b>67</b><br />\n"
    "\n";

/* 25_upload_files_already_present_same_content.txt */
static const char R_UPLOAD_DUP_FATAL[] =
    "<?xml version=\"1.0\" encoding=\"ISO-8859-1\" ?>\n"
    "<upload_files>\n"
    "<br />\n"
    "<b>Fatal error</b>:  Uncaught mysqli_sql_exception: Duplicate entry 'bbe43737a911f2690cfd29cff94f84da.txt' for key 'jf_name' in /srv/boinc/projects/test/html/inc/db_conn.inc:67\n"
    "Stack trace:\n"
    "#0 /srv/boinc/projects/test/html/inc/db_conn.inc(67): mysqli-&gt;query()\n"
    "#1 /srv/boinc/projects/test/html/inc/db_conn.inc(157): DbConn-&gt;do_query()\n"
    "#2 /srv/boinc/projects/test/html/inc/submit_db.inc(124): DbConn-&gt;insert()\n"
    "#3 /srv/boinc/projects/test/html/user/job_file.php(256): BoincJobFile::insert()\n"
    "#4 /srv/boinc/projects/test/html/user/job_file.php(310): upload_files()\n"
    "#5 {main}\n"
    "  thrown in <b>/srv/boinc/projects/test/html/inc/db_conn.inc</b> on line <b>67</b><br />\n"
    "\n";

/* 26_upload_files_immutability_violation.txt */
static const char R_UPLOAD_IMMUTABILITY[] =
    "<?xml version=\"1.0\" encoding=\"ISO-8859-1\" ?>\n"
    "<upload_files>\n"
    "<error>\n"
    "    <error_num>-1</error_num>\n"
    "    <error_msg>file immutability violation for bbe43737a911f2690cfd29cff94f84da.txt</error_msg>\n"
    "</error>\n"
    "</upload_files>\n"
    "\n";

/* 31_job_file_no_such_action.txt */
static const char R_NO_SUCH_ACTION[] =
    "<?xml version=\"1.0\" encoding=\"ISO-8859-1\" ?>\n"
    "<error>\n"
    "    <error_num>-1</error_num>\n"
    "    <error_msg>no such action</error_msg>\n"
    "</error>\n"
    "\n";

/* 33_query_files_no_batch_id.txt */
static const char R_QUERY_FILES_NO_BATCH[] =
    "<?xml version=\"1.0\" encoding=\"ISO-8859-1\" ?>\n"
    "<query_files>\n"
    "<absent_files>\n"
    "<file>1</file>\n"
    "</absent_files>\n"
    "        </query_files>\n"
    "    \n";

/* 34_submit_batch_4_jobs.txt */
static const char R_SUBMIT_BATCH[] =
    "<?xml version=\"1.0\" encoding=\"ISO-8859-1\" ?>\n"
    "<submit_batch>\n"
    "<batch_id>5</batch_id>\n"
    "        </submit_batch>\n"
    "    \n";

/* 35_query_batch2_mmt0_all_UNSENT.txt */
static const char R_QB2_ONE[] =
    "<?xml version=\"1.0\" encoding=\"ISO-8859-1\" ?>\n"
    "<query_batch2>\n"
    "<server_time>1795251757.7113</server_time>\n"
    "   <batch_size>4</batch_size>\n"
    "    <job>\n"
    "        <job_name>sb1_job1</job_name>\n"
    "        <status>UNSENT</status>\n"
    "    </job>\n"
    "    <job>\n"
    "        <job_name>sb1_job2</job_name>\n"
    "        <status>UNSENT</status>\n"
    "    </job>\n"
    "    <job>\n"
    "        <job_name>sb1_job3</job_name>\n"
    "        <status>UNSENT</status>\n"
    "    </job>\n"
    "    <job>\n"
    "        <job_name>sb1_job4</job_name>\n"
    "        <status>UNSENT</status>\n"
    "    </job>\n"
    "</query_batch2>\n"
    "\n";

/* 36_query_batch2_three_batches.txt */
static const char R_QB2_THREE[] =
    "<?xml version=\"1.0\" encoding=\"ISO-8859-1\" ?>\n"
    "<query_batch2>\n"
    "<server_time>1795251757.7362</server_time>\n"
    "   <batch_size>4</batch_size>\n"
    "    <job>\n"
    "        <job_name>sb1_job1</job_name>\n"
    "        <status>UNSENT</status>\n"
    "    </job>\n"
    "    <job>\n"
    "        <job_name>sb1_job2</job_name>\n"
    "        <status>UNSENT</status>\n"
    "    </job>\n"
    "    <job>\n"
    "        <job_name>sb1_job3</job_name>\n"
    "        <status>UNSENT</status>\n"
    "    </job>\n"
    "    <job>\n"
    "        <job_name>sb1_job4</job_name>\n"
    "        <status>UNSENT</status>\n"
    "    </job>\n"
    "   <batch_size>3</batch_size>\n"
    "    <job>\n"
    "        <job_name>gahp3_job1</job_name>\n"
    "        <status>DONE</status>\n"
    "    </job>\n"
    "    <job>\n"
    "        <job_name>gahp3_job2</job_name>\n"
    "        <status>DONE</status>\n"
    "    </job>\n"
    "    <job>\n"
    "        <job_name>gahp3_job3</job_name>\n"
    "        <status>ERROR</status>\n"
    "    </job>\n"
    "   <batch_size>1</batch_size>\n"
    "    <job>\n"
    "        <job_name>prepatch_job1</job_name>\n"
    "        <status>DONE</status>\n"
    "    </job>\n"
    "</query_batch2>\n"
    "\n";

/* 37_query_batch2_unknown_batch_name.txt */
static const char R_QB2_UNKNOWN[] =
    "<?xml version=\"1.0\" encoding=\"ISO-8859-1\" ?>\n"
    "<query_batch2>\n"
    "<error>\n"
    "    <error_num>-1</error_num>\n"
    "    <error_msg>no batch named no_such_batch</error_msg>\n"
    "</error>\n"
    "</query_batch2>\n"
    "\n";

/* 38_query_batches.txt */
static const char R_QUERY_BATCHES[] =
    "<?xml version=\"1.0\" encoding=\"ISO-8859-1\" ?>\n"
    "<query_batches>\n"
    "<br />\n"
    "<b>Deprecated</b>:  Creation of dynamic property BoincBatch::$njobs_success is deprecated in <b>/srv/boinc/projects/test/html/inc/submit_util.inc</b> on line <b>187</b><br />\n"
    "<br />\n"
    "<b>Deprecated</b>:  Creation of dynamic property BoincBatch::$njobs_in_prog is deprecated in <b>/srv/boinc/projects/test/html/inc/submit_util.inc</b> on line <b>188</b><br />\n"
    "    <batch>\n"
    "\n"
    "        <id>3</id>\n"
    "        <create_time>1795251544</create_time>\n"
    "        <expire_time>0</expire_time>\n"
    "        <est_completion_time>0</est_completion_time>\n"
    "        <njobs>1</njobs>\n"
    "        <fraction_done>1</fraction_done>\n"
    "        <nerror_jobs>0</nerror_jobs>\n"
    "        <state>2</state>\n"
    "        <completion_time>1795251760</completion_time>\n"
    "        <credit_estimate>0</credit_estimate>\n"
    "        <credit_canonical>0.20974257314815</credit_canonical>\n"
    "        <name>prepatch_batch</name>\n"
    "        <app_name>uppercase</app_name>\n"
    "   </batch>\n"
    "<br />\n"
    "<b>Deprecated</b>:  Creation of dynamic property BoincBatch::$njobs_success is deprecated in <b>/srv/boinc/projects/test/html/inc/submit_util.inc</b> on line <b>187</b><br />\n"
    "<br />\n"
    "<b>Deprecated</b>:  Creation of dynamic property BoincBatch::$njobs_in_prog is deprecated in <b>/srv/boinc/projects/test/html/inc/submit_util.inc</b> on line <b>188</b><br />\n"
    "    <batch>\n"
    "\n"
    "        <id>5</id>\n"
    "        <create_time>1795251738</create_time>\n"
    "        <expire_time>1795338138</expire_time>\n"
    "        <est_completion_time>0</est_completion_time>\n"
    "        <njobs>4</njobs>\n"
    "        <fraction_done>0</fraction_done>\n"
    "        <nerror_jobs>0</nerror_jobs>\n"
    "        <state>1</state>\n"
    "        <completion_time>0</completion_time>\n"
    "        <credit_estimate>0</credit_estimate>\n"
    "        <credit_canonical>0</credit_canonical>\n"
    "        <name>samplebatch1</name>\n"
    "        <app_name>uppercase</app_name>\n"
    "   </batch>\n"
    "<br />\n"
    "<b>Deprecated</b>:  Creation of dynamic property BoincBatch::$njobs_success is deprecated in <b>/srv/boinc/projects/test/html/inc/submit_util.inc</b> on line <b>187</b><br />\n"
    "<br />\n"
    "<b>Deprecated</b>:  Creation of dynamic property BoincBatch::$njobs_in_prog is deprecated in <b>/srv/boinc/projects/test/html/inc/submit_util.inc</b> on line <b>188</b><br />\n"
    "    <batch>\n"
    "\n"
    "        <id>6</id>\n"
    "        <create_time>1795251741</create_time>\n"
    "        <expire_time>1795338138</expire_time>\n"
    "        <est_completion_time>0</est_completion_time>\n"
    "        <njobs>0</njobs>\n"
    "        <fraction_done>0</fraction_done>\n"
    "        <nerror_jobs>0</nerror_jobs>\n"
    "        <state>0</state>\n"
    "        <completion_time>0</completion_time>\n"
    "        <credit_estimate>0</credit_estimate>\n"
    "        <credit_canonical>0</credit_canonical>\n"
    "        <name>samplebatch1</name>\n"
    "        <app_name>uppercase</app_name>\n"
    "   </batch>\n"
    "</query_batches>\n"
    "\n";

/* 39_query_batch_by_name_with_details.txt */
static const char R_QUERY_BATCH_DETAILS[] =
    "<?xml version=\"1.0\" encoding=\"ISO-8859-1\" ?>\n"
    "<query_batch>\n"
    "<br />\n"
    "<b>Deprecated</b>:  Creation of dynamic property BoincBatch::$njobs_success is deprecated in <b>/srv/boinc/projects/test/html/inc/submit_util.inc</b> on line <b>187</b><br />\n"
    "<br />\n"
    "<b>Deprecated</b>:  Creation of dynamic property BoincBatch::$njobs_in_prog is deprecated in <b>/srv/boinc/projects/test/html/inc/submit_util.inc</b> on line <b>188</b><br />\n"
    "\n"
    "        <id>5</id>\n"
    "        <create_time>1795251738</create_time>\n"
    "        <expire_time>1795338138</expire_time>\n"
    "        <est_completion_time>0</est_completion_time>\n"
    "        <njobs>4</njobs>\n"
    "        <fraction_done>0</fraction_done>\n"
    "        <nerror_jobs>0</nerror_jobs>\n"
    "        <state>1</state>\n"
    "        <completion_time>0</completion_time>\n"
    "        <credit_estimate>0</credit_estimate>\n"
    "        <credit_canonical>0</credit_canonical>\n"
    "        <name>samplebatch1</name>\n"
    "        <app_name>uppercase</app_name>\n"
    "        <job>\n"
    "        <id>5</id>\n"
    "        <name>sb1_job1</name>\n"
    "        <canonical_instance_id>0</canonical_instance_id>\n"
    "            <status>queued</status>\n"
    "        </job>\n"
    "        <job>\n"
    "        <id>6</id>\n"
    "        <name>sb1_job2</name>\n"
    "        <canonical_instance_id>0</canonical_instance_id>\n"
    "            <status>queued</status>\n"
    "        </job>\n"
    "        <job>\n"
    "        <id>7</id>\n"
    "        <name>sb1_job3</name>\n"
    "        <canonical_instance_id>0</canonical_instance_id>\n"
    "            <status>queued</status>\n"
    "        </job>\n"
    "        <job>\n"
    "        <id>8</id>\n"
    "        <name>sb1_job4</name>\n"
    "        <canonical_instance_id>0</canonical_instance_id>\n"
    "            <status>queued</status>\n"
    "        </job>\n"
    "</query_batch>\n"
    "\n";

/* 43_submit_batch_missing_physical_file.txt */
static const char R_SUBMIT_MISSING_FILE[] =
    "<?xml version=\"1.0\" encoding=\"ISO-8859-1\" ?>\n"
    "<submit_batch>\n"
    "<error>\n"
    "    <error_num>-1</error_num>\n"
    "    <error_msg>create_work failed: md5_file: can't open /srv/boinc/projects/test/download/e9/11111111111111111111111111111111.txt\n"
    "md5_file: No such file or directory\n"
    "process_input_template: md5_file fopen() failed\n"
    "process_input_template(): fopen() failed\n"
    "create_work() failed: -108\n"
    "copy /srv/boinc/projects/test/download/11111111111111111111111111111111.txt to /srv/boinc/projects/test/download/e9/11111111111111111111111111111111.txt\n"
    "</error_msg>\n"
    "</error>\n"
    "</submit_batch>\n"
    "\n";

/* 44_submit_batch_duplicate_job_name_unescaped_xml_in_error_msg.txt */
static const char R_SUBMIT_UNESCAPED[] =
    "<?xml version=\"1.0\" encoding=\"ISO-8859-1\" ?>\n"
    "<submit_batch>\n"
    "<error>\n"
    "    <error_num>-1</error_num>\n"
    "    <error_msg>create_work failed: Database error: Duplicate entry 'sb1_job1' for key 'name'\n"
    "query=insert into workunit values (0, 1795251767, 1, 'sb6_new1', '<file_info>\n"
    "    <name>bbe43737a911f2690cfd29cff94f84da.txt</name>\n"
    "    <url>http://127.0.0.1/test/download/208/bbe43737a911f2690cfd29cff94f84da.txt</url>\n"
    "    <md5_cksum>bbe43737a911f2690cfd29cff94f84da</md5_cksum>\n"
    "    <nbytes>25</nbytes>\n"
    "</file_info>\n"
    "<workunit>\n"
    "<command_line>\n"
    "\n"
    "</command_line>\n"
    "<file_ref>\n"
    "    <file_name>bbe43737a911f2690cfd29cff94f84da.txt</file_name>\n"
    "    <open_name>in</open_name>\n"
    "    <copy_file/>\n"
    "</file_ref>\n"
    "</workunit>', 6, 1000000000.000000, 10000000000000.000000, 100000000.000000, 100000000.000000, 0, 0, 0.000000, 1795251767, 600, 0, 0, 0, 0, 0.000000, 1, 1, 1, 2, 1, 'templates/uppercase_out', 0, NOW(), 0.000000, 0, 0, 0, -1, '', 0 ),(0, 1795251767, 1, 'sb1_job1', '<file_info>\n"
    "    <name>bbe43737a911f2690cfd29cff94f84da.txt</name>\n"
    "    <url>http://127.0.0.1/test/download/208/bbe43737a911f2690cfd29cff94f84da.txt</url>\n"
    "    <md5_cksum>bbe43737a911f2690cfd29cff94f84da</md5_cksum>\n"
    "    <nbytes>25</nbytes>\n"
    "</file_info>\n"
    "<workunit>\n"
    "<command_line>\n"
    "\n"
    "</command_line>\n"
    "<file_ref>\n"
    "    <file_name>bbe43737a911f2690cfd29cff94f84da.txt</file_name>\n"
    "    <open_name>in</open_name>\n"
    "    <copy_file/>\n"
    "</file_ref>\n"
    "</workunit>', 6, 1000000000.000000, 10000000000000.000000, 100000000.000000, 100000000.000000, 0, 0, 0.000000, 1795251767, 600, 0, 0, 0, 0, 0.000000, 1, 1, 1, 2, 1, 'templates/uppercase_out', 0, NOW(), 0.000000, 0, 0, 0, -1, '', 0 )\n"
    "wu.insert_batch() failed: 1\n"
    "MySQL error: Duplicate entry 'sb1_job1' for key 'name'\n"
    "</error_msg>\n"
    "</error>\n"
    "</submit_batch>\n"
    "\n";

/* 47_abort_jobs_unsent_job.txt */
static const char R_ABORT_STRAY[] =
    "<?xml version=\"1.0\" encoding=\"ISO-8859-1\" ?>\n"
    "<abort_jobs>\n"
    "<aborted sb1_job4>\n"
    "<success>1</success>\n"
    "        </abort_jobs>\n"
    "    \n";

/* 48_abort_jobs_unknown_job.txt */
static const char R_ABORT_UNKNOWN[] =
    "<?xml version=\"1.0\" encoding=\"ISO-8859-1\" ?>\n"
    "<abort_jobs>\n"
    "<error>\n"
    "    <error_num>-1</error_num>\n"
    "    <error_msg>no job no_such_job</error_msg>\n"
    "</error>\n"
    "</abort_jobs>\n"
    "\n";

/* 51_query_batch2_mmt_nonzero_only_changed_job.txt */
static const char R_QB2_MMT[] =
    "<?xml version=\"1.0\" encoding=\"ISO-8859-1\" ?>\n"
    "<query_batch2>\n"
    "<server_time>1795251775.8762</server_time>\n"
    "   <batch_size>1</batch_size>\n"
    "    <job>\n"
    "        <job_name>sb1_job4</job_name>\n"
    "        <status>ERROR</status>\n"
    "    </job>\n"
    "</query_batch2>\n"
    "\n";

/* 70_query_completed_job_done.txt */
static const char R_QCJ_DONE[] =
    "<?xml version=\"1.0\" encoding=\"ISO-8859-1\" ?>\n"
    "<query_completed_job>\n"
    "<completed_job>\n"
    "   <error_mask>0</error_mask>\n"
    "   <canonical_resultid>10</canonical_resultid>\n"
    "   <exit_status>0</exit_status>\n"
    "   <elapsed_time>3.018647</elapsed_time>\n"
    "   <cpu_time>1.99752</cpu_time>\n"
    "   <stderr_out><![CDATA[\n"
    "\n"
    "&lt;core_client_version&gt;7.20.5&lt;/core_client_version&gt;\n"
    "&lt;![CDATA[\n"
    "&lt;stderr_txt&gt;\n"
    "2026-11-21 09:03:48 (14151): app started; CPU time 2.000000, flags:\n"
    "2026-11-21 09:03:50 (14151): called boinc_finish(0)\n"
    "\n"
    "&lt;/stderr_txt&gt;\n"
    "]]&gt;\n"
    "   ]]></stderr_out>\n"
    "</completed_job>\n"
    "        </query_completed_job>\n"
    "    \n";

/* 71_query_completed_job_error_STOCK_fatal.txt */
static const char R_QCJ_STOCK_FATAL[] =
    "<?xml version=\"1.0\" encoding=\"ISO-8859-1\" ?>\n"
    "<query_completed_job>\n"
    "<completed_job>\n"
    "   <error_mask>10</error_mask>\n"
    "<br />\n"
    "<b>Warning</b>:  Undefined variable $job_id in <b>/srv/boinc/projects/test/html/user/submit_rpc_handler.php</b> on line <b>890</b><br />\n"
    "<br />\n"
    "<b>Fatal error</b>:  Uncaught mysqli_sql_exception: You have an error in your SQL syntax; check the manual that corresponds to your MariaDB server version for the right syntax to use near '' at line 1 in /srv/boinc/projects/test/html/inc/db_conn.inc:67\n"
    "Stack trace:\n"
    "#0 /srv/boinc/projects/test/html/inc/db_conn.inc(67): mysqli-&gt;query()\n"
    "#1 /srv/boinc/projects/test/html/inc/db_conn.inc(119): DbConn-&gt;do_query()\n"
    "#2 /srv/boinc/projects/test/html/inc/db_conn.inc(137): DbConn-&gt;enum_general()\n"
    "#3 /srv/boinc/projects/test/html/inc/db_conn.inc(141): DbConn-&gt;enum_fields()\n"
    "#4 /srv/boinc/projects/test/html/inc/boinc_db.inc(379): DbConn-&gt;enum()\n"
    "#5 /srv/boinc/projects/test/html/user/submit_rpc_handler.php(890): BoincResult::enum()\n"
    "#6 /srv/boinc/projects/test/html/user/submit_rpc_handler.php(1120): query_completed_job()\n"
    "#7 {main}\n"
    "  thrown in <b>/srv/boinc/projects/test/html/inc/db_conn.inc</b> on line <b>67</b><br />\n"
    "\n";

/* 73_query_completed_job_unknown_job.txt */
static const char R_QCJ_UNKNOWN[] =
    "<?xml version=\"1.0\" encoding=\"ISO-8859-1\" ?>\n"
    "<query_completed_job>\n"
    "<error>\n"
    "    <error_num>-1</error_num>\n"
    "    <error_msg>no such job</error_msg>\n"
    "</error>\n"
    "</query_completed_job>\n"
    "\n";

/* 74_query_completed_job_error_WITH_fixqcj_patch.txt */
static const char R_QCJ_ERROR_FIXED[] =
    "<?xml version=\"1.0\" encoding=\"ISO-8859-1\" ?>\n"
    "<query_completed_job>\n"
    "<completed_job>\n"
    "   <error_mask>10</error_mask>\n"
    "   <error_resultid>12</error_resultid>\n"
    "   <exit_status>246</exit_status>\n"
    "   <elapsed_time>0</elapsed_time>\n"
    "   <cpu_time>0</cpu_time>\n"
    "   <stderr_out><![CDATA[\n"
    "\n"
    "&lt;core_client_version&gt;7.20.5&lt;/core_client_version&gt;\n"
    "&lt;![CDATA[\n"
    "&lt;message&gt;\n"
    "process exited with code 246 (0xf6, -10)&lt;/message&gt;\n"
    "&lt;stderr_txt&gt;\n"
    "2026-11-21 09:03:48 (14152): app started; CPU time 2.000000, flags: early_exit\n"
    "\n"
    "&lt;/stderr_txt&gt;\n"
    "]]&gt;\n"
    "   ]]></stderr_out>\n"
    "</completed_job>\n"
    "        </query_completed_job>\n"
    "    \n";

/* 75_query_completed_job_aborted_unsent_WITH_fixqcj_patch.txt */
static const char R_QCJ_ABORTED_FIXED[] =
    "<?xml version=\"1.0\" encoding=\"ISO-8859-1\" ?>\n"
    "<query_completed_job>\n"
    "<completed_job>\n"
    "   <error_mask>16</error_mask>\n"
    "</completed_job>\n"
    "        </query_completed_job>\n"
    "    \n";

/* 80_set_expire_time.txt */
static const char R_SET_EXPIRE[] =
    "<?xml version=\"1.0\" encoding=\"ISO-8859-1\" ?>\n"
    "<set_expire_time>\n"
    "<success>1</success></set_expire_time>\n"
    "\n";

/* 82_set_expire_time_unknown_batch.txt */
static const char R_SET_EXPIRE_UNKNOWN[] =
    "<?xml version=\"1.0\" encoding=\"ISO-8859-1\" ?>\n"
    "<set_expire_time>\n"
    "<error>\n"
    "    <error_num>-1</error_num>\n"
    "    <error_msg>no such batch</error_msg>\n"
    "</error>\n"
    "</set_expire_time>\n"
    "\n";

/* 83_retire_batch.txt */
static const char R_RETIRE_WARNINGS[] =
    "<?xml version=\"1.0\" encoding=\"ISO-8859-1\" ?>\n"
    "<retire_batch>\n"
    "<br />\n"
    "<b>Deprecated</b>:  Creation of dynamic property BoincBatch::$njobs_success is deprecated in <b>/srv/boinc/projects/test/html/inc/submit_util.inc</b> on line <b>187</b><br />\n"
    "<br />\n"
    "<b>Deprecated</b>:  Creation of dynamic property BoincBatch::$njobs_in_prog is deprecated in <b>/srv/boinc/projects/test/html/inc/submit_util.inc</b> on line <b>188</b><br />\n"
    "<success>1</success>\n"
    "        </retire_batch>\n"
    "    \n";

/* 85_retire_batch_unknown_batch.txt */
static const char R_RETIRE_UNKNOWN[] =
    "<?xml version=\"1.0\" encoding=\"ISO-8859-1\" ?>\n"
    "<retire_batch>\n"
    "<error>\n"
    "    <error_num>-1</error_num>\n"
    "    <error_msg>no such batch</error_msg>\n"
    "</error>\n"
    "</retire_batch>\n"
    "\n";

/* 90_upload_files_nothing_to_upload_as_gahp_sends.txt */
static const char R_UPLOAD_NOTHING[] =
    "<?xml version=\"1.0\" encoding=\"ISO-8859-1\" ?>\n"
    "<upload_files>\n"
    "<success/>\n"
    "        </upload_files>\n"
    "    \n";

/* 00_setup_submit_batch_unpatched_php82_template_bug.txt */
static const char R_SUBMIT_TEMPLATE_WARNING[] =
    "<?xml version=\"1.0\" encoding=\"ISO-8859-1\" ?>\n"
    "<submit_batch>\n"
    "<br />\n"
    "<b>Warning</b>:  simplexml_load_file(): I/O warning : failed to load external entity &quot;/srv/boinc/projects/test/html/inc/../../templates/uppercase_in&quot; in <b>/srv/boinc/projects/test/html/user/submit_rpc_handler.php</b> on line <b>103</b><br />\n"
    "<error>\n"
    "    <error_num>-1</error_num>\n"
    "    <error_msg>couldn't parse input template file /srv/boinc/projects/test/html/inc/../../templates/uppercase_in</error_msg>\n"
    "</error>\n"
    "</submit_batch>\n"
    "\n";

/* 00_setup_upload_files_missing_batch_file_assoc_table.txt */
static const char R_UPLOAD_MISSING_TABLE[] =
    "<?xml version=\"1.0\" encoding=\"ISO-8859-1\" ?>\n"
    "<upload_files>\n"
    "<br />\n"
    "<b>Fatal error</b>:  Uncaught mysqli_sql_exception: Table 'test.batch_file_assoc' doesn't exist in /srv/boinc/projects/test/html/inc/db_conn.inc:67\n"
    "Stack trace:\n"
    "#0 /srv/boinc/projects/test/html/inc/db_conn.inc(67): mysqli-&gt;query()\n"
    "#1 /srv/boinc/projects/test/html/inc/db_conn.inc(157): DbConn-&gt;do_query()\n"
    "#2 /srv/boinc/projects/test/html/inc/submit_db.inc(145): DbConn-&gt;insert()\n"
    "#3 /srv/boinc/projects/test/html/user/job_file.php(263): BoincBatchFileAssoc::insert()\n"
    "#4 /srv/boinc/projects/test/html/user/job_file.php(310): upload_files()\n"
    "#5 {main}\n"
    "  thrown in <b>/srv/boinc/projects/test/html/inc/db_conn.inc</b> on line <b>67</b><br />\n";

/* 61_get_output_workunit_file_bad_auth.txt */
static const char R_OUTPUT_BAD_AUTH[] =
    "ERROR: bad authenticator\n";

/* 62_get_output_workunit_file_unknown_wu.txt */
static const char R_OUTPUT_UNKNOWN_WU[] =
    "ERROR: no workunit no_such_job\n";

/* 66_get_output_missing_wu_name.txt */
static const char R_OUTPUT_HTML_PAGE[] =
    "<!DOCTYPE html>\n"
    "        <html lang=\"en\">\n"
    "        <head>\n"
    "    <script src=\"https://code.jquery.com/jquery-3.7.1.slim.min.js\"></script>\n"
    "        <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
    "    <title>Unable to handle request</title>\n"
    "\n"
    "        <meta charset=\"utf-8\">\n"
    "    <script>\n"
    "  if (window.matchMedia('(prefers-color-scheme: dark)').media === 'not all') {\n"
    "      console.log(\"foobar\");\n"
    "    document.documentElement.style.display = 'none';\n"
    "    document.head.insertAdjacentHTML(\n"
    "        'beforeend',\n"
    "        '<link rel=\"stylesheet\" href=\"sample_bootstrap.min.css\" onload=\"document.documentElement.style.display = \\'\\'\"><link rel=\"stylesheet\" href=\"custom.css\">'\n"
    "    );\n"
    "  }\n"
    "</script>\n"
    "<link rel=\"stylesheet\" href=\"bootstrap_darkly.min.css\" media=\"(prefers-color-scheme: dark)\">\n"
    "<link rel=\"stylesheet\" href=\"custom_dark.css\" media=\"(prefers-color-scheme: dark)\">\n"
    "<link rel=\"stylesheet\" href=\"sample_bootstrap.min.css\" media=\"(prefers-color-scheme: no-preference), (prefers-color-scheme: light)\">\n"
    "<link rel=\"stylesheet\" href=\"custom.css\" media=\"(prefers-color-scheme: no-preference), (prefers-color-scheme: light)\">\n"
    "        <link rel=alternate type=\"application/rss+xml\" title=\"RSS 2.0\" href=\"http://127.0.0.1/test/rss_main.php\">\n"
    "        </head>\n"
    "    <body ><div class=\"container-fluid\">\n"
    "    <nav class=\"navbar navbar-default\">\n"
    "\n"
    "  <div class=\"container-fluid\">\n"
    "    <div class=\"navbar-header\">\n"
    "      <button type=\"button\" class=\"navbar-toggle\" data-toggle=\"collapse\" data-target=\"#myNavbar\">\n"
    "        <span class=\"icon-bar\"></span>\n"
    "        <span class=\"icon-bar\"></span>\n"
    "        <span class=\"icon-bar\"></span>\n"
    "      </button>\n"
    "      <a class=\"navbar-brand\" href=http://127.0.0.1/test/>REPLACE WITH PROJECT NAME</a>\n"
    "    </div>\n"
    "    <div class=\"collapse navbar-collapse\" id=\"myNavbar\">\n"
    "      <ul class=\"nav navbar-nav\">\n"
    "    \n"
    "      <li class=\"dropdown\">\n"
    "        <a class=\"dropdown-toggle\" data-toggle=\"dropdown\" href=\"#\">Project\n"
    "        <span class=\"caret\"></span></a>\n"
    "        <ul class=\"dropdown-menu\">\n"
    "    <li><a href=\"http://127.0.0.1/test/about.php\">About REPLACE WITH PROJECT NAME</a></li>\n"
    "            <li><a href=\"http://127.0.0.1/test/welcome.php\">Help</a></li>\n"
    "            \n"
    "        </ul>\n"
    "      </li>\n"
    "    \n"
    "      <li class=\"dropdown\">\n"
    "        <a class=\"dropdown-toggle\" data-toggle=\"dropdown\" href=\"#\">Computing\n"
    "        <span class=\"caret\"></span></a>\n"
    "        <ul class=\"dropdown-menu\">\n"
    "    <li><a href=\"http://127.0.0.1/test/prefs.php?subset=global\">Preferences</a></li>\n"
    "            <li><a href=\"http://127.0.0.1/test/server_status.php\">Server status</a></li>\n"
    "            <li><a href=\"http://127.0.0.1/test/stats.php\">Credit statistics</a></li>\n"
    "            <li><a href=\"http://127.0.0.1/test/apps.php\">Applications</a></li>\n"
    "            <li><a href=\"http://127.0.0.1/test/gpu_list.php\">GPU models</a></li>\n"
    "            <li><a href=\"http://127.0.0.1/test/cpu_list.php\">CPU models</a></li>\n"
    "            <li><a href=\"http://127.0.0.1/test/host_stats.php\">Computer types</a></li>\n"
    "            \n"
    "        </ul>\n"
    "      </li>\n"
    "    \n"
    "      <li class=\"dropdown\">\n"
    "        <a class=\"dropdown-toggle\" data-toggle=\"dropdown\" href=\"#\">Community\n"
    "        <span class=\"caret\"></span></a>\n"
    "        <ul class=\"dropdown-menu\">\n"
    "    <li><a href=\"http://127.0.0.1/test/forum_index.php\">Message boards</a></li>\n"
    "            <li><a href=\"http://127.0.0.1/test/team.php\">Teams</a></li>\n"
    "            <li><a href=\"http://127.0.0.1/test/profile_menu.php\">Profiles</a></li>\n"
    "            <li><a href=\"http://127.0.0.1/test/edit_forum_preferences_form.php\">Preferences</a></li>\n"
    "            <li><a href=\"http://127.0.0.1/test/user_search.php\">User search</a></li>\n"
    "            <li><a href=\"http://127.0.0.1/test/uotd.php\">User of the day</a></li>\n"
    "            <li><a href=\"http://127.0.0.1/test/cert1.php\">Certificate</a></li>\n"
    "            \n"
    "        </ul>\n"
    "      </li>\n"
    "    \n"
    "      <li class=\"dropdown\">\n"
    "        <a class=\"dropdown-toggle\" data-toggle=\"dropdown\" href=\"#\">Site\n"
    "        <span class=\"caret\"></span></a>\n"
    "        <ul class=\"dropdown-menu\">\n"
    "    <li><a href=\"http://127.0.0.1/test/site_search.php\">Site search</a></li>\n"
    "            <li><a href=\"http://127.0.0.1/test/language_select.php\">Languages</a></li>\n"
    "            \n"
    "        </ul>\n"
    "      </li>\n"
    "    \n"
    "      </ul>\n"
    "      <ul class=\"nav navbar-nav navbar-right\">\n"
    "    \n"
    "                <li><a href=\"http://127.0.0.1/test/signup.php\">Join</a></li>\n"
    "                <li><a href=\"http://127.0.0.1/test/login_form.php\">Login</a></li>\n"
    "                \n"
    "      </ul>\n"
    "    </div>\n"
    "  </div>\n"
    "</nav>\n"
    "    <h2>Unable to handle request</h2>\n"
    "missing or bad parameter: wu_name<br>\n"
    "<center><a href=\"https://boinc.berkeley.edu\"><img src=http://127.0.0.1/test//img/pb_boinc.gif alt=\"Powered by BOINC\"></a></center><p><center>&copy; 2026  REPLACE WITH COPYRIGHT HOLDER</center>\n"
    "        <script src=\"http://127.0.0.1/test//bootstrap.min.js\"></script>\n"
    "        </div>\n"
    "        </body>\n"
    "        </html>\n"
    "    \n";

/* ---- helpers --------------------------------------------------------------- */

static boinc_error no_error(void)
{
    boinc_error e = { 0 };
    return e;
}

/* The message is one line: no control characters, no double spaces, no
 * leading or trailing space. */
static void assert_one_line(const char *msg)
{
    assert_non_null(msg);
    assert_true(msg[0] != '\0');
    for (const char *p = msg; *p != '\0'; p++)
        assert_true((unsigned char)*p >= 0x20);
    assert_null(strstr(msg, "  "));
    assert_true(msg[0] != ' ');
    assert_true(msg[strlen(msg) - 1] != ' ');
}

static void expect_success(const char *rpc, const char *body)
{
    boinc_error e = no_error();
    assert_int_equal(boinc_parse_success(rpc, body, strlen(body), &e),
                     BOINC_OK);
    boinc_error_clear(&e);
}

/* Parse body as a success reply to rpc; expect code and a message that
 * contains want (when not NULL). */
static void expect_failure(const char *rpc, const char *body, int code,
                           const char *want)
{
    boinc_error e = no_error();
    assert_int_equal(boinc_parse_success(rpc, body, strlen(body), &e), code);
    assert_int_equal(e.code, code);
    assert_one_line(e.msg);
    if (want != NULL && strstr(e.msg, want) == NULL)
        fail_msg("message '%s' lacks '%s'", e.msg, want);
    boinc_error_clear(&e);
}

static void expect_server_message(const char *rpc, const char *body,
                                  const char *exact)
{
    boinc_error e = no_error();
    assert_int_equal(boinc_parse_success(rpc, body, strlen(body), &e),
                     BOINC_E_SERVER);
    assert_string_equal(e.msg, exact);
    boinc_error_clear(&e);
}

/* ---- simple success / error replies ------------------------------------------ */

static void test_success_replies(void **state)
{
    (void)state;
    expect_success("ping", R_PING);
    expect_success("upload_files", R_UPLOAD_TWO);        /* <success/> */
    expect_success("upload_files", R_UPLOAD_NOTHING);
    expect_success("set_expire_time", R_SET_EXPIRE);
    expect_success("retire_batch", R_RETIRE_WARNINGS);   /* PHP Deprecated */
    expect_success("abort_jobs", R_ABORT_STRAY);         /* <aborted NAME> */
}

static void test_server_errors_keep_server_text(void **state)
{
    (void)state;
    expect_server_message("get_templates", R_TEMPLATES_UNKNOWN_APP,
                          "app not found: nosuchapp");
    expect_server_message("upload_files", R_UPLOAD_IMMUTABILITY,
                          "file immutability violation for "
                          "bbe43737a911f2690cfd29cff94f84da.txt");
    expect_server_message("abort_jobs", R_ABORT_UNKNOWN, "no job no_such_job");
    expect_server_message("set_expire_time", R_SET_EXPIRE_UNKNOWN,
                          "no such batch");
    expect_server_message("retire_batch", R_RETIRE_UNKNOWN, "no such batch");
    expect_server_message("query_batch2", R_QB2_UNKNOWN,
                          "no batch named no_such_batch");
    expect_server_message("query_completed_job", R_QCJ_UNKNOWN, "no such job");
    /* PHP warning before the <error> */
    expect_server_message("submit_batch", R_SUBMIT_TEMPLATE_WARNING,
                          "couldn't parse input template file "
                          "/srv/boinc/projects/test/html/inc/../../templates/"
                          "uppercase_in");
}

static void test_top_level_errors(void **state)
{
    (void)state;
    /* No outer element at all: still a server error, not "truncated". */
    expect_server_message("ping", R_BAD_COMMAND, "bad command");
    expect_server_message("query_files", R_NO_SUCH_ACTION, "no such action");
    expect_server_message("ping", R_UNPARSEABLE,
                          "can't parse request message: this is not xml <<<");
    expect_server_message("ping", R_EMPTY_POST,
                          "can't parse request message:");
}

static void test_multiline_error_squashed(void **state)
{
    (void)state;
    expect_server_message("submit_batch", R_SUBMIT_MISSING_FILE,
        "create_work failed: md5_file: can't open "
        "/srv/boinc/projects/test/download/e9/"
        "11111111111111111111111111111111.txt md5_file: No such file or "
        "directory process_input_template: md5_file fopen() failed "
        "process_input_template(): fopen() failed create_work() failed: -108 "
        "copy /srv/boinc/projects/test/download/"
        "11111111111111111111111111111111.txt to "
        "/srv/boinc/projects/test/download/e9/"
        "11111111111111111111111111111111.txt");
}

static void test_unescaped_markup_in_error(void **state)
{
    (void)state;
    boinc_error e = no_error();
    long id = 0;
    assert_int_equal(boinc_parse_batch_id("submit_batch", R_SUBMIT_UNESCAPED,
                                          strlen(R_SUBMIT_UNESCAPED), &id, &e),
                     BOINC_E_SERVER);
    assert_one_line(e.msg);
    /* The whole raw text survives, markup included, start to end. */
    assert_non_null(strstr(e.msg, "create_work failed: Database error: "
                                  "Duplicate entry 'sb1_job1' for key 'name' "
                                  "query=insert into workunit values"));
    assert_non_null(strstr(e.msg, "'sb6_new1', '<file_info> <name>"
                                  "bbe43737a911f2690cfd29cff94f84da.txt"
                                  "</name>"));
    const char *tail = "wu.insert_batch() failed: 1 MySQL error: Duplicate "
                       "entry 'sb1_job1' for key 'name'";
    assert_true(strlen(e.msg) > strlen(tail));
    assert_string_equal(e.msg + strlen(e.msg) - strlen(tail), tail);
    assert_int_equal(id, 0);
    boinc_error_clear(&e);
}

static void test_non_fatal_php_error_ignored(void **state)
{
    (void)state;
    /* With PHP debug on, notices come as <error> without or with a zero
     * error_num. */
    expect_success("retire_batch",
        "<?xml version=\"1.0\" encoding=\"ISO-8859-1\" ?>\n<retire_batch>\n"
        "<error>\n<type>8</type>\n<file>/x/submit_util.inc</file>\n"
        "<line>12</line>\n<error_msg>Undefined index</error_msg>\n</error>\n"
        "<error>\n<error_num>0</error_num>\n<error_msg>just a notice"
        "</error_msg>\n</error>\n<success>1</success>\n</retire_batch>\n");
}

static void test_php_fatal_errors_never_success(void **state)
{
    (void)state;
    expect_failure("query_files", R_QUERY_FILES_DUP_FATAL, BOINC_E_PARSE,
                   "server error: Fatal error: Uncaught mysqli_sql_exception: "
                   "Duplicate entry '1-5' for key 'job_file_id'");
    expect_failure("upload_files", R_UPLOAD_DUP_FATAL, BOINC_E_PARSE,
                   "server error: Fatal error: Uncaught mysqli_sql_exception: "
                   "Duplicate entry 'bbe43737a911f2690cfd29cff94f84da.txt'");
    expect_failure("upload_files", R_UPLOAD_MISSING_TABLE, BOINC_E_PARSE,
                   "Table 'test.batch_file_assoc' doesn't exist");
    /* The stack trace is left out of the message. */
    boinc_error e = no_error();
    unsigned char absent[3];
    assert_int_equal(boinc_parse_absent_files(R_QUERY_FILES_DUP_FATAL,
                                              strlen(R_QUERY_FILES_DUP_FATAL),
                                              3, absent, &e),
                     BOINC_E_PARSE);
    assert_null(strstr(e.msg, "Stack trace"));
    assert_null(strstr(e.msg, "<b>"));
    boinc_error_clear(&e);
}

static void test_truncated_and_garbage(void **state)
{
    (void)state;
    expect_failure("ping", "<?xml version=\"1.0\" ?>\n<ping>\n<succ",
                   BOINC_E_PARSE, "truncated");
    expect_failure("ping", "\x01\x02 not xml at all & <<<", BOINC_E_PARSE,
                   "ping");
    expect_failure("ping", "", BOINC_E_PARSE, "empty body");
    /* Closed, well-formed, but not what was asked for. */
    expect_failure("ping", "<ping><nothing/></ping>", BOINC_E_PARSE,
                   "no <success>");
}

/* ---- per-RPC parsers ----------------------------------------------------------- */

static void test_create_and_submit_batch_ids(void **state)
{
    (void)state;
    boinc_error e = no_error();
    long id = 0;
    assert_int_equal(boinc_parse_batch_id("create_batch", R_CREATE_BATCH,
                                          strlen(R_CREATE_BATCH), &id, &e),
                     BOINC_OK);
    assert_int_equal(id, 5);
    id = 0;
    assert_int_equal(boinc_parse_batch_id("submit_batch", R_SUBMIT_BATCH,
                                          strlen(R_SUBMIT_BATCH), &id, &e),
                     BOINC_OK);
    assert_int_equal(id, 5);
    const char *bad = "<create_batch><batch_id>x5</batch_id></create_batch>";
    assert_int_equal(boinc_parse_batch_id("create_batch", bad, strlen(bad),
                                          &id, &e),
                     BOINC_E_PARSE);
    assert_one_line(e.msg);
    boinc_error_clear(&e);
}

static void test_templates(void **state)
{
    (void)state;
    boinc_error e = no_error();
    boinc_templates t;
    assert_int_equal(boinc_parse_templates(R_TEMPLATES_BY_APP,
                                           strlen(R_TEMPLATES_BY_APP), &t, &e),
                     BOINC_OK);
    assert_int_equal(t.n_inputs, 1);
    assert_string_equal(t.input_names[0], "in");
    assert_int_equal(t.n_outputs, 1);
    assert_string_equal(t.output_names[0], "out");
    boinc_templates_free(&t);

    const char *two =
        "<get_templates><templates><input_template>"
        "<file_info><number>0</number></file_info>"
        "<file_info><number>1</number></file_info>"
        "<workunit><file_ref><file_number>0</file_number>"
        "<open_name> a.txt </open_name></file_ref></workunit>"
        "</input_template><output_template>"
        "<file_info><name><OUTFILE_0/></name></file_info>"
        "<file_info><name><OUTFILE_1/></name></file_info>"
        "<result><file_ref><file_name><OUTFILE_0/></file_name>"
        "<open_name>first</open_name></file_ref>"
        "<file_ref><file_name><OUTFILE_1/></file_name>"
        "<open_name>second</open_name></file_ref></result>"
        "</output_template></templates></get_templates>";
    assert_int_equal(boinc_parse_templates(two, strlen(two), &t, &e),
                     BOINC_OK);
    assert_int_equal(t.n_inputs, 2);
    assert_string_equal(t.input_names[0], "a.txt");
    assert_null(t.input_names[1]);      /* fewer open_names than inputs */
    assert_int_equal(t.n_outputs, 2);
    assert_string_equal(t.output_names[0], "first");
    assert_string_equal(t.output_names[1], "second");
    boinc_templates_free(&t);

    const char *none = "<get_templates><oops/></get_templates>";
    assert_int_equal(boinc_parse_templates(none, strlen(none), &t, &e),
                     BOINC_E_PARSE);
    assert_null(t.input_names);
    boinc_error_clear(&e);
}

static void check_job(const boinc_batch_status *b, size_t i, const char *name,
                      const char *status)
{
    assert_true(i < b->njobs);
    assert_string_equal(b->jobs[i].name, name);
    assert_string_equal(b->jobs[i].status, status);
}

static void test_query_batch2(void **state)
{
    (void)state;
    boinc_error e = no_error();
    boinc_query_result r;
    assert_int_equal(boinc_parse_query_batch2(R_QB2_ONE, strlen(R_QB2_ONE), 1,
                                              &r, &e),
                     BOINC_OK);
    assert_string_equal(r.server_time, "1795251757.7113");   /* verbatim */
    assert_int_equal(r.nbatches, 1);
    assert_int_equal(r.batches[0].njobs, 4);
    check_job(&r.batches[0], 3, "sb1_job4", "UNSENT");
    boinc_query_result_free(&r);

    assert_int_equal(boinc_parse_query_batch2(R_QB2_THREE,
                                              strlen(R_QB2_THREE), 3, &r, &e),
                     BOINC_OK);
    assert_int_equal(r.batches[0].njobs, 4);
    assert_int_equal(r.batches[1].njobs, 3);
    assert_int_equal(r.batches[2].njobs, 1);
    check_job(&r.batches[1], 0, "gahp3_job1", "DONE");
    check_job(&r.batches[1], 2, "gahp3_job3", "ERROR");
    check_job(&r.batches[2], 0, "prepatch_job1", "DONE");
    boinc_query_result_free(&r);

    assert_int_equal(boinc_parse_query_batch2(R_QB2_MMT, strlen(R_QB2_MMT), 1,
                                              &r, &e),
                     BOINC_OK);
    assert_string_equal(r.server_time, "1795251775.8762");
    assert_int_equal(r.batches[0].njobs, 1);
    check_job(&r.batches[0], 0, "sb1_job4", "ERROR");
    boinc_query_result_free(&r);
    boinc_error_clear(&e);
}

/* The real servers' query_batch2 replies take the streaming path (issue
 * 10 #1: one <job> in memory at a time), not the tree fallback; an
 * irregular reply is left to the tree parser. */
static void test_query_batch2_stream_takes_real_replies(void **state)
{
    (void)state;
    boinc_query_result r;
    assert_int_equal(boinc_parse_query_batch2_stream(R_QB2_THREE,
                                                     strlen(R_QB2_THREE), 3, &r),
                     BOINC_OK);
    assert_int_equal(r.batches[1].njobs, 3);
    check_job(&r.batches[1], 2, "gahp3_job3", "ERROR");
    boinc_query_result_free(&r);
    assert_int_equal(boinc_parse_query_batch2_stream(R_QB2_MMT, strlen(R_QB2_MMT),
                                                     1, &r),
                     BOINC_OK);
    boinc_query_result_free(&r);
    static const char odd[] =
        "<query_batch2><server_time>1</server_time><notice/>"
        "<batch_size>0</batch_size></query_batch2>";
    assert_int_equal(boinc_parse_query_batch2_stream(odd, strlen(odd), 1, &r), -1);
    assert_null(r.batches);
    boinc_error e = no_error();
    assert_int_equal(boinc_parse_query_batch2(odd, strlen(odd), 1, &r, &e), BOINC_OK);
    assert_int_equal(r.batches[0].njobs, 0);
    boinc_query_result_free(&r);
    boinc_error_clear(&e);
}

static void expect_batch2_parse_error(const char *body, size_t nbatches);

/* Fields the SAX pass must read as the tree does: predefined and numeric
 * entities, CDATA (raw '<' and an entity kept literally), a comment
 * inside a name,
 * multi-byte UTF-8 under the servers' ISO-8859-1 declaration, an ignored
 * extra child, attributes and white space around the text. */
static const char R_QB2_FIELDS[] =
    "<?xml version=\"1.0\" encoding=\"ISO-8859-1\" ?>\n"
    "<query_batch2>\n"
    "<server_time> 1795251757.5 </server_time>\n"
    "<batch_size>5</batch_size>\n"
    "<job><job_name>amp&amp;lt&lt;gt&gt;q&quot;a&apos;</job_name>"
    "<status>DONE</status></job>\n"
    "<job><job_name><![CDATA[cd<a>&amp;b]]>_tail</job_name>"
    "<status><![CDATA[ERROR]]></status></job>\n"
    "<job><status>IN_PROGRESS</status><extra>x</extra>"
    "<job_name>n\xc3\xa9_\xe2\x82\xac_\xf0\x9f\x98\x80_&#233;&#x20AC;</job_name></job>\n"
    "<job a=\"1\"><job_name>com<!-- hidden -->ment</job_name>"
    "<status>UNSENT</status></job>\n"
    "<job>\n  <job_name>\n\t spaced \r\n</job_name>\n  <status> DONE </status>\n</job>\n"
    "</query_batch2>\n";

static void expect_fields(const boinc_query_result *r)
{
    assert_string_equal(r->server_time, "1795251757.5");
    assert_int_equal(r->nbatches, 1);
    const boinc_batch_status *b = &r->batches[0];
    assert_int_equal(b->njobs, 5);
    check_job(b, 0, "amp&lt<gt>q\"a'", "DONE");
    check_job(b, 1, "cd<a>&amp;b_tail", "ERROR");     /* CDATA: literal */
    check_job(b, 2, "n\xc3\xa9_\xe2\x82\xac_\xf0\x9f\x98\x80_\xc3\xa9\xe2\x82\xac",
              "IN_PROGRESS");
    check_job(b, 3, "comment", "UNSENT");
    check_job(b, 4, "spaced", "DONE");
}

/* Whatever the size of the pieces libxml2 is fed (down to one byte: every
 * entity, CDATA marker, tag and UTF-8 sequence split at every point), the
 * SAX pass reads the fields exactly as the tree parser does. */
static void test_query_batch2_stream_any_split(void **state)
{
    (void)state;
    size_t len = strlen(R_QB2_FIELDS);
    boinc_error e = no_error();
    boinc_query_result t;
    assert_int_equal(boinc_parse_query_batch2_tree(R_QB2_FIELDS, len, 1, &t, &e),
                     BOINC_OK);
    expect_fields(&t);
    boinc_query_result_free(&t);
    for (size_t chunk = 1; chunk <= len; chunk++) {
        boinc_query_result r;
        assert_int_equal(boinc_parse_query_batch2_chunked(R_QB2_FIELDS, len, 1,
                                                          &r, chunk),
                         BOINC_OK);
        expect_fields(&r);
        boinc_query_result_free(&r);
    }
    boinc_error_clear(&e);
}

/* The plain scan takes the servers' own layout; the same reply written
 * with what only XML allows (an attribute, a comment, a character
 * reference, CDATA, a CR LF line end) goes on to the SAX pass and reads
 * the same.  A plain reply that breaks a rule of the
 * shape (a <job> beyond <batch_size>) is refused by both. */
static void test_query_batch2_plain_and_xml_agree(void **state)
{
    (void)state;
    static const char *const same[] = {
        "<?xml version=\"1.0\" encoding=\"ISO-8859-1\" ?>\n<query_batch2>\n"
        "<server_time>17.5</server_time>\n <batch_size>2</batch_size>\n"
        "  <job>\n    <job_name> a_b </job_name>\n    <status>DONE</status>\n  </job>\n"
        "  <job><job_name>c\td</job_name><status>UNSENT</status></job>\n"
        "</query_batch2>\n\n",
        "<?xml version=\"1.0\"?><query_batch2 x=\"1\"><!-- c -->"
        "<server_time>17.5</server_time><batch_size>2</batch_size>"
        "<job><job_name>a_&#98;</job_name><status>DONE</status></job>\r\n"
        "<job><job_name><![CDATA[c\td]]></job_name><status>UNSENT</status></job>"
        "</query_batch2>",
    };
    for (size_t i = 0; i < sizeof same / sizeof same[0]; i++) {
        boinc_query_result r;
        assert_int_equal(boinc_parse_query_batch2_stream(same[i], strlen(same[i]), 1,
                                                         &r), BOINC_OK);
        assert_string_equal(r.server_time, "17.5");
        assert_int_equal(r.batches[0].njobs, 2);
        check_job(&r.batches[0], 0, "a_b", "DONE");
        check_job(&r.batches[0], 1, "c\td", "UNSENT");
        boinc_query_result_free(&r);
    }
    static const char extra[] =
        "<query_batch2><server_time>1</server_time><batch_size>1</batch_size>"
        "<job><job_name>a</job_name><status>DONE</status></job>"
        "<job><job_name>b</job_name><status>DONE</status></job></query_batch2>";
    boinc_query_result r;
    assert_int_equal(boinc_parse_query_batch2_stream(extra, strlen(extra), 1, &r), -1);
    assert_null(r.batches);
}

/* Replies the SAX pass leaves to the tree parser (which then gives its
 * own result or error): a DTD, an undeclared entity, a second <job_name>,
 * markup inside a number, a <batch_size> larger than the reply could
 * hold, bad UTF-8, an unknown declared encoding. */
static void test_query_batch2_stream_irregular(void **state)
{
    (void)state;
    static const char *const odd[] = {
        "<!DOCTYPE query_batch2 [<!ENTITY e \"x\">]><query_batch2>"
        "<server_time>1</server_time><batch_size>1</batch_size>"
        "<job><job_name>&e;</job_name><status>DONE</status></job></query_batch2>",
        "<query_batch2><server_time>1</server_time><batch_size>1</batch_size>"
        "<job><job_name>&nope;</job_name><status>DONE</status></job></query_batch2>",
        "<query_batch2><server_time>1</server_time><batch_size>1</batch_size>"
        "<job><job_name>a</job_name><job_name>b</job_name><status>DONE</status>"
        "</job></query_batch2>",
        "<query_batch2><server_time>1</server_time><batch_size>1<b/></batch_size>"
        "<job><job_name>a</job_name><status>DONE</status></job></query_batch2>",
        "<query_batch2><server_time>1</server_time><batch_size>4000000000</batch_size>"
        "<job><job_name>a</job_name><status>DONE</status></job></query_batch2>",
        "<query_batch2><server_time>1</server_time><batch_size>1</batch_size>"
        "<job><job_name>a\xff</job_name><status>DONE</status></job></query_batch2>",
        /* an encoding the tree parser does not read as UTF-8 (found by
         * the fuzzer: the tree stops at an unknown one) */
        "<?xml version=\"1.0\" encoding=\"IUO-8859-1\" ?><query_batch2>"
        "<server_time>1</server_time><batch_size>0</batch_size></query_batch2>",
    };
    for (size_t i = 0; i < sizeof odd / sizeof odd[0]; i++) {
        boinc_query_result r;
        assert_int_equal(boinc_parse_query_batch2_stream(odd[i], strlen(odd[i]), 1,
                                                         &r), -1);
        assert_null(r.batches);
        assert_null(r.server_time);
    }
    /* the tree parser reads the DTD's entity and the first name */
    boinc_error e = no_error();
    boinc_query_result r;
    assert_int_equal(boinc_parse_query_batch2(odd[0], strlen(odd[0]), 1, &r, &e),
                     BOINC_OK);
    check_job(&r.batches[0], 0, "x", "DONE");
    boinc_query_result_free(&r);
    assert_int_equal(boinc_parse_query_batch2(odd[2], strlen(odd[2]), 1, &r, &e),
                     BOINC_OK);
    check_job(&r.batches[0], 0, "a", "DONE");
    boinc_query_result_free(&r);
    boinc_error_clear(&e);
    expect_batch2_parse_error(odd[4], 1);
}

/* Names longer than a pool block (256 KiB) get a block of their own and
 * the short names around them stay intact, on both parsers. */
static void test_query_batch2_long_names_in_pool(void **state)
{
    (void)state;
    size_t long_len = 300 * 1024;
    strbuf body = STRBUF_INIT;
    assert_int_equal(strbuf_puts(&body, "<query_batch2><server_time>1</server_time>"
                                        "<batch_size>40</batch_size>"), 0);
    for (int i = 0; i < 40; i++) {
        assert_int_equal(strbuf_puts(&body, "<job><job_name>"), 0);
        if (i % 10 == 3)
            for (size_t k = 0; k < long_len; k++)
                assert_int_equal(strbuf_putc(&body, (char)('a' + (int)(k % 26))), 0);
        else
            assert_int_equal(strbuf_printf(&body, "short_%d", i), 0);
        assert_int_equal(strbuf_puts(&body, "</job_name><status>DONE</status></job>"), 0);
    }
    assert_int_equal(strbuf_puts(&body, "</query_batch2>"), 0);
    for (int pass = 0; pass < 2; pass++) {
        boinc_query_result r;
        boinc_error e = no_error();
        int rc = pass == 0
                     ? boinc_parse_query_batch2_stream(body.data, body.len, 1, &r)
                     : boinc_parse_query_batch2_tree(body.data, body.len, 1, &r, &e);
        assert_int_equal(rc, BOINC_OK);
        for (int i = 0; i < 40; i++) {
            const char *name = r.batches[0].jobs[i].name;
            if (i % 10 == 3) {
                assert_int_equal(strlen(name), long_len);
                assert_int_equal(name[long_len - 1], 'a' + (int)((long_len - 1) % 26));
            } else {
                char want[32];
                snprintf(want, sizeof want, "short_%d", i);
                assert_string_equal(name, want);
            }
            assert_string_equal(r.batches[0].jobs[i].status, "DONE");
        }
        boinc_query_result_free(&r);
        boinc_error_clear(&e);
    }
    strbuf_free(&body);
}

static void expect_batch2_parse_error(const char *body, size_t nbatches)
{
    boinc_error e = no_error();
    boinc_query_result r;
    assert_int_equal(boinc_parse_query_batch2(body, strlen(body), nbatches, &r,
                                              &e),
                     BOINC_E_PARSE);
    assert_one_line(e.msg);
    assert_null(r.batches);
    assert_null(r.server_time);
    boinc_error_clear(&e);
}

static void test_query_batch2_count_mismatch(void **state)
{
    (void)state;
    expect_batch2_parse_error(R_QB2_THREE, 2);     /* one batch too many */
    expect_batch2_parse_error(R_QB2_THREE, 4);     /* one batch missing */
    expect_batch2_parse_error(
        "<query_batch2><server_time>1</server_time><batch_size>2</batch_size>"
        "<job><job_name>a</job_name><status>DONE</status></job>"
        "</query_batch2>", 1);
    expect_batch2_parse_error(
        "<query_batch2><server_time>1</server_time><batch_size>0</batch_size>"
        "<job><job_name>a</job_name><status>DONE</status></job>"
        "</query_batch2>", 1);
    expect_batch2_parse_error(
        "<query_batch2><batch_size>0</batch_size></query_batch2>", 1);
    expect_batch2_parse_error(
        "<query_batch2><server_time>1</server_time><batch_size>1</batch_size>"
        "<job><status>DONE</status></job></query_batch2>", 1);
    expect_batch2_parse_error(
        "<query_batch2><server_time>1</server_time>"
        "<batch_size>-1</batch_size></query_batch2>", 1);
    expect_batch2_parse_error(
        "<query_batch2><server_time></server_time>"
        "<batch_size>0</batch_size></query_batch2>", 1);
    expect_batch2_parse_error(
        "<query_batch2><server_time>soon</server_time>"
        "<batch_size>0</batch_size></query_batch2>", 1);
}

static void test_query_batch2_unescaped_ampersand(void **state)
{
    (void)state;
    /* Servers echo names without escaping them. */
    const char *body =
        "<query_batch2><server_time>7.5</server_time><batch_size>1</batch_size>"
        "<job><job_name>a&b c</job_name><status>IN_PROGRESS</status></job>"
        "<batch_size>0</batch_size></query_batch2>";
    boinc_error e = no_error();
    boinc_query_result r;
    assert_int_equal(boinc_parse_query_batch2(body, strlen(body), 2, &r, &e),
                     BOINC_OK);
    check_job(&r.batches[0], 0, "a&b c", "IN_PROGRESS");
    assert_int_equal(r.batches[1].njobs, 0);
    boinc_query_result_free(&r);
}

static void test_completed_job_done(void **state)
{
    (void)state;
    boinc_error e = no_error();
    boinc_completed_job j;
    assert_int_equal(boinc_parse_completed_job(R_QCJ_DONE, strlen(R_QCJ_DONE),
                                               &j, &e),
                     BOINC_OK);
    assert_int_equal(j.error_mask, 0);
    assert_int_equal(j.canonical_resultid, 10);
    assert_int_equal(j.error_resultid, 0);
    assert_true(j.has_exit_status);
    assert_int_equal(j.exit_status, 0);
    assert_true(j.elapsed_time > 3.0186 && j.elapsed_time < 3.0187);
    assert_true(j.cpu_time > 1.9975 && j.cpu_time < 1.9976);
    assert_non_null(j.stderr_out);
    /* CDATA content unescaped exactly once. */
    assert_non_null(strstr(j.stderr_out,
                           "<core_client_version>7.20.5</core_client_version>"
                           "\n<![CDATA[\n<stderr_txt>\n2026-11-21 09:03:48 "
                           "(14151): app started;"));
    assert_non_null(strstr(j.stderr_out, "</stderr_txt>\n]]>"));
    assert_null(strstr(j.stderr_out, "&lt;"));
    assert_null(strstr(j.stderr_out, "&gt;"));
    boinc_completed_job_free(&j);
    assert_null(j.stderr_out);
}

static void test_completed_job_error_and_aborted(void **state)
{
    (void)state;
    boinc_error e = no_error();
    boinc_completed_job j;
    assert_int_equal(boinc_parse_completed_job(R_QCJ_ERROR_FIXED,
                                               strlen(R_QCJ_ERROR_FIXED), &j,
                                               &e),
                     BOINC_OK);
    assert_int_equal(j.error_mask, 10);
    assert_int_equal(j.canonical_resultid, 0);
    assert_int_equal(j.error_resultid, 12);
    assert_true(j.has_exit_status);
    assert_int_equal(j.exit_status, 246);
    assert_non_null(strstr(j.stderr_out,
                           "<message>\nprocess exited with code 246 (0xf6, "
                           "-10)</message>"));
    boinc_completed_job_free(&j);

    assert_int_equal(boinc_parse_completed_job(R_QCJ_ABORTED_FIXED,
                                               strlen(R_QCJ_ABORTED_FIXED), &j,
                                               &e),
                     BOINC_OK);
    assert_int_equal(j.error_mask, 16);
    assert_false(j.has_exit_status);
    assert_null(j.stderr_out);
    boinc_completed_job_free(&j);

    /* Stock server bug: <completed_job> is there but the reply dies. */
    assert_int_equal(boinc_parse_completed_job(R_QCJ_STOCK_FATAL,
                                               strlen(R_QCJ_STOCK_FATAL), &j,
                                               &e),
                     BOINC_E_PARSE);
    assert_one_line(e.msg);
    assert_non_null(strstr(e.msg, "server error: Fatal error: Uncaught "
                                  "mysqli_sql_exception: You have an error in "
                                  "your SQL syntax"));
    assert_null(j.stderr_out);
    boinc_error_clear(&e);
}

static void test_query_batches_with_php_warnings(void **state)
{
    (void)state;
    boinc_error e = no_error();
    boinc_batch_info *b = NULL;
    size_t n = 0;
    assert_int_equal(boinc_parse_query_batches(R_QUERY_BATCHES,
                                               strlen(R_QUERY_BATCHES), &b, &n,
                                               &e),
                     BOINC_OK);
    assert_int_equal(n, 3);
    assert_int_equal(b[0].id, 3);
    assert_string_equal(b[0].name, "prepatch_batch");
    assert_string_equal(b[0].app_name, "uppercase");
    assert_int_equal(b[0].state, 2);
    assert_int_equal(b[0].njobs, 1);
    assert_int_equal(b[1].id, 5);
    assert_string_equal(b[1].name, "samplebatch1");
    assert_int_equal(b[1].state, 1);
    assert_int_equal(b[1].njobs, 4);
    assert_true(b[1].create_time == 1795251738.0);
    assert_true(b[1].expire_time == 1795338138.0);
    assert_int_equal(b[2].id, 6);
    assert_string_equal(b[2].name, "samplebatch1");   /* duplicate name */
    assert_int_equal(b[2].state, 0);
    boinc_batch_info_free(b, n);

    const char *empty = "<query_batches>\n</query_batches>\n";
    assert_int_equal(boinc_parse_query_batches(empty, strlen(empty), &b, &n,
                                               &e),
                     BOINC_OK);
    assert_int_equal(n, 0);
    boinc_batch_info_free(b, n);
}

static void test_query_batch_job_names(void **state)
{
    (void)state;
    boinc_error e = no_error();
    char **names = NULL;
    size_t n = 0;
    assert_int_equal(boinc_parse_batch_jobs(R_QUERY_BATCH_DETAILS,
                                            strlen(R_QUERY_BATCH_DETAILS),
                                            &names, &n, &e),
                     BOINC_OK);
    assert_int_equal(n, 4);
    assert_string_equal(names[0], "sb1_job1");
    assert_string_equal(names[3], "sb1_job4");
    boinc_names_free(names, n);
}

static void test_query_files(void **state)
{
    (void)state;
    boinc_error e = no_error();
    unsigned char absent[3] = { 9, 9, 9 };
    assert_int_equal(boinc_parse_absent_files(R_QUERY_FILES_SOME_ABSENT,
                                              strlen(R_QUERY_FILES_SOME_ABSENT),
                                              3, absent, &e),
                     BOINC_OK);
    assert_int_equal(absent[0], 0);
    assert_int_equal(absent[1], 1);
    assert_int_equal(absent[2], 1);
    assert_int_equal(boinc_parse_absent_files(R_QUERY_FILES_NO_BATCH,
                                              strlen(R_QUERY_FILES_NO_BATCH),
                                              2, absent, &e),
                     BOINC_OK);
    assert_int_equal(absent[0], 0);
    assert_int_equal(absent[1], 1);
    /* An index outside the request is a bad reply, not memory corruption. */
    assert_int_equal(boinc_parse_absent_files(R_QUERY_FILES_SOME_ABSENT,
                                              strlen(R_QUERY_FILES_SOME_ABSENT),
                                              2, absent, &e),
                     BOINC_E_PARSE);
    assert_one_line(e.msg);
    boinc_error_clear(&e);
}

static void test_get_output_error_bodies(void **state)
{
    (void)state;
    boinc_error e = no_error();
    assert_int_equal(boinc_output_error(200, "text/html; charset=UTF-8",
                                        R_OUTPUT_BAD_AUTH,
                                        strlen(R_OUTPUT_BAD_AUTH), &e),
                     BOINC_E_SERVER);
    assert_string_equal(e.msg, "bad authenticator");
    assert_int_equal(boinc_output_error(200, "text/html; charset=UTF-8",
                                        R_OUTPUT_UNKNOWN_WU,
                                        strlen(R_OUTPUT_UNKNOWN_WU), &e),
                     BOINC_E_SERVER);
    assert_string_equal(e.msg, "no workunit no_such_job");
    assert_int_equal(boinc_output_error(200, "text/html; charset=utf-8",
                                        R_OUTPUT_HTML_PAGE,
                                        strlen(R_OUTPUT_HTML_PAGE), &e),
                     BOINC_E_SERVER);
    assert_string_equal(e.msg, "missing or bad parameter: wu_name");
    assert_int_equal(boinc_output_error(200, NULL, "", 0, &e), BOINC_E_SERVER);
    assert_one_line(e.msg);
    boinc_error_clear(&e);
    assert_true(boinc_output_is_file("application/octet-stream"));
    assert_true(boinc_output_is_file("Application/Octet-Stream; x=y"));
    assert_false(boinc_output_is_file("text/html; charset=UTF-8"));
    assert_false(boinc_output_is_file(NULL));
}

/* ---- request building ------------------------------------------------------------- */

static void test_request_ping_and_simple(void **state)
{
    (void)state;
    strbuf sb = STRBUF_INIT;
    assert_int_equal(boinc_req_ping(&sb), 0);
    assert_string_equal(strbuf_str(&sb), "<ping> </ping>\n");
    strbuf_reset(&sb);
    assert_int_equal(boinc_req_get_templates(&sb, "A&B", "app_name", "upper<case>"), 0);
    assert_string_equal(strbuf_str(&sb),
                        "<get_templates>\n"
                        "<authenticator>A&amp;B</authenticator>\n"
                        "<app_name>upper&lt;case&gt;</app_name>\n"
                        "</get_templates>\n");
    strbuf_reset(&sb);
    assert_int_equal(boinc_req_create_batch(&sb, "k", "b & c", "app",
                                            1795338138.0), 0);
    assert_string_equal(strbuf_str(&sb),
                        "<create_batch>\n<authenticator>k</authenticator>\n"
                        "<batch_name>b &amp; c</batch_name>\n"
                        "<app_name>app</app_name>\n"
                        "<expire_time>1795338138.000000</expire_time>\n"
                        "</create_batch>\n");
    strbuf_reset(&sb);
    assert_int_equal(boinc_req_set_expire_time(&sb, "k", "x<y", 2e9), 0);
    assert_string_equal(strbuf_str(&sb),
                        "<set_expire_time>\n<authenticator>k</authenticator>\n"
                        "<batch_name>x&lt;y</batch_name>\n"
                        "<expire_time>2000000000.000000</expire_time>\n"
                        "</set_expire_time>\n");
    strbuf_reset(&sb);
    assert_int_equal(boinc_req_query_batch_jobs(&sb, "k", 42), 0);
    assert_string_equal(strbuf_str(&sb),
                        "<query_batch>\n<authenticator>k</authenticator>\n"
                        "<batch_id>42</batch_id>\n"
                        "<get_job_details>1</get_job_details>\n"
                        "</query_batch>\n");
    strbuf_free(&sb);
}

static void test_request_submit_batch_escaping(void **state)
{
    (void)state;
    const char *in1[] = { "d41d8cd98f00b204e9800998ecf8427e.dat" };
    const char *in2[] = { "aa.txt", "bb .txt" };
    boinc_job_spec jobs[] = {
        { "job<1>&", NULL, 1, in1 },
        { "job 2", "--text \"a & b\" <in> 'q'", 2, in2 },
    };
    gahp_job_params params = { 1e9, -1, 0, 0, 600, 3 };
    strbuf sb = STRBUF_INIT;
    assert_int_equal(boinc_req_submit_batch(&sb, "key", 7, "uppercase",
                                            &params, jobs, 2), 0);
    assert_string_equal(strbuf_str(&sb),
        "<submit_batch>\n<authenticator>key</authenticator>\n<batch>\n"
        "<batch_id>7</batch_id>\n<app_name>uppercase</app_name>\n"
        "<app_version_num>3</app_version_num>\n<job_params>\n"
        "<rsc_disk_bound>0.000000</rsc_disk_bound>\n"
        "<rsc_fpops_est>1000000000.000000</rsc_fpops_est>\n"
        "<rsc_fpops_bound>0.000000</rsc_fpops_bound>\n"
        "<rsc_memory_bound>0.000000</rsc_memory_bound>\n"
        "<delay_bound>600.000000</delay_bound>\n</job_params>\n"
        "<job>\n<name>job&lt;1&gt;&amp;</name>\n"
        "<input_file>\n<mode>local_staged</mode>\n"
        "<source>d41d8cd98f00b204e9800998ecf8427e.dat</source>\n"
        "</input_file>\n</job>\n"
        "<job>\n<name>job 2</name>\n"
        "<command_line>--text &quot;a &amp; b&quot; &lt;in&gt; &apos;q&apos;"
        "</command_line>\n"
        "<input_file>\n<mode>local_staged</mode>\n<source>aa.txt</source>\n"
        "</input_file>\n"
        "<input_file>\n<mode>local_staged</mode>\n<source>bb .txt</source>\n"
        "</input_file>\n</job>\n</batch>\n</submit_batch>\n");
    strbuf_free(&sb);
}

static void test_request_lists(void **state)
{
    (void)state;
    strbuf sb = STRBUF_INIT;
    const char *batches[] = { "b&1", "b 2" };
    assert_int_equal(boinc_req_query_batch2(&sb, "k", "1795251771.3842",
                                            batches, 2), 0);
    assert_string_equal(strbuf_str(&sb),
                        "<query_batch2>\n<authenticator>k</authenticator>\n"
                        "<min_mod_time>1795251771.3842</min_mod_time>\n"
                        "<batch_name>b&amp;1</batch_name>\n"
                        "<batch_name>b 2</batch_name>\n</query_batch2>\n");
    strbuf_reset(&sb);
    assert_int_equal(boinc_req_query_batch2(&sb, "k", NULL, batches, 1), 0);
    assert_non_null(strstr(strbuf_str(&sb), "<min_mod_time>0</min_mod_time>"));
    strbuf_reset(&sb);
    const char *jobs[] = { "j<1", "j2" };
    assert_int_equal(boinc_req_abort_jobs(&sb, "k", jobs, 2), 0);
    assert_string_equal(strbuf_str(&sb),
                        "<abort_jobs>\n<authenticator>k</authenticator>\n"
                        "<job_name>j&lt;1</job_name>\n<job_name>j2</job_name>\n"
                        "</abort_jobs>\n");
    strbuf_reset(&sb);
    const char *files[] = { "a b.txt", "c&d" };
    assert_int_equal(boinc_req_file_list(&sb, "query_files", "k", 5, files, 2),
                     0);
    assert_string_equal(strbuf_str(&sb),
                        "<query_files>\n<authenticator>k</authenticator>\n"
                        "<batch_id>5</batch_id>\n"
                        "<phys_name>a b.txt</phys_name>\n"
                        "<phys_name>c&amp;d</phys_name>\n</query_files>\n");
    strbuf_reset(&sb);
    assert_int_equal(boinc_req_file_list(&sb, "upload_files", "k", 0, files, 0),
                     0);
    assert_string_equal(strbuf_str(&sb),
                        "<upload_files>\n<authenticator>k</authenticator>\n"
                        "</upload_files>\n");
    strbuf_free(&sb);
}

static void test_output_url_escaped(void **state)
{
    (void)state;
    boinc_client *c = boinc_client_new(NULL);
    assert_non_null(c);
    strbuf sb = STRBUF_INIT;
    assert_int_equal(boinc_output_url(&sb, "http://127.0.0.1:8/p/", "a&b=c",
                                      "job 1&x", 2, boinc_http_escape, c), 0);
    assert_string_equal(strbuf_str(&sb),
                        "http://127.0.0.1:8/p/get_output.php?cmd=workunit_file"
                        "&auth_str=a%26b%3Dc&wu_name=job%201%26x&file_num=2");
    strbuf_free(&sb);
    boinc_client_free(c);
}

/* ---- URLs, text, numbers, policy ------------------------------------------------------ */

static void expect_url(const char *in, const char *want)
{
    const char *why = NULL;
    char *out = url_normalize(in, &why);
    if (want == NULL) {
        assert_null(out);
        assert_non_null(why);
        assert_one_line(why);
    } else {
        assert_non_null(out);
        assert_null(why);
        assert_string_equal(out, want);
    }
    free(out);
}

static void test_normalize_url(void **state)
{
    (void)state;
    expect_url("http://127.0.0.1/test", "http://127.0.0.1/test/");
    expect_url("http://127.0.0.1/test/", "http://127.0.0.1/test/");
    expect_url("HTTPS://127.0.0.1:8443/p", "HTTPS://127.0.0.1:8443/p/");
    expect_url("http://127.0.0.1", "http://127.0.0.1/");
    expect_url("ftp://127.0.0.1/x/", NULL);
    expect_url("file:///etc/passwd", NULL);
    expect_url("127.0.0.1/test/", NULL);
    expect_url("http://", NULL);
    expect_url("", NULL);
    expect_url(NULL, NULL);
    expect_url("http://127.0.0.1/a b/", NULL);
    expect_url("http://127.0.0.1/x?y=1", NULL);
}

static void test_squash_and_unescape(void **state)
{
    (void)state;
    char *s = boinc_squash("\n\t a\r\n\tb    c \n", 16, BOINC_MSG_MAX);
    assert_string_equal(s, "a b c");
    free(s);
    s = boinc_squash("abcdefghijklmnopqrstuvwxyz", 26, 16);
    assert_string_equal(s, "abcdefghij [...]");
    free(s);
    /* never cut inside a UTF-8 character */
    s = boinc_squash("aaaaaaaa\xc3\xa9\xc3\xa9\xc3\xa9xxxxxxxx", 22, 16);
    assert_string_equal(s, "aaaaaaaa\xc3\xa9 [...]");
    free(s);
    const char *in = "&lt;a&gt; &amp;amp; &quot;&#39;&#x41;&#233; &foo; & x";
    s = boinc_unescape_entities(in, strlen(in));
    assert_string_equal(s, "<a> &amp; \"'A\xc3\xa9 &foo; & x");
    free(s);
    const char *html = "<br />\n<b>Warning</b>:  a &lt;b&gt; in <b>f</b>";
    s = boinc_html_summary(html, strlen(html), 100);
    assert_string_equal(s, "Warning: a <b> in f");
    free(s);
}

/* The rule of the numbers in replies (base/num.h): blanks around allowed. */
static int xml_long(const char *s, long *out)
{
    return num_parse_long_blanks(s, strlen(s), LONG_MIN, LONG_MAX, out);
}

static int xml_double(const char *s, double *out)
{
    return num_parse_double_blanks(s, strlen(s), out);
}

static void test_number_parsing(void **state)
{
    (void)state;
    long l = 0;
    double d = 0;
    assert_int_equal(xml_long(" 12\n", &l), 0);
    assert_int_equal(l, 12);
    assert_int_equal(xml_long("-1", &l), 0);
    assert_int_equal(l, -1);
    assert_int_equal(xml_long("12x", &l), -1);
    assert_int_equal(xml_long("", &l), -1);
    assert_int_equal(xml_long("99999999999999999999999", &l), -1);
    assert_int_equal(xml_double("1795251757.7113", &d), 0);
    assert_true(d > 1795251757.71 && d < 1795251757.72);
    assert_int_equal(xml_double("1e9", &d), 0);
    assert_int_equal(xml_double("nan", &d), -1);
    assert_int_equal(xml_double("1.5.2", &d), -1);
}

static void test_retry_policy(void **state)
{
    (void)state;
    assert_int_equal(boinc_backoff_ms(0, 1.0), 500);
    assert_int_equal(boinc_backoff_ms(0, 0.0), 250);
    assert_int_equal(boinc_backoff_ms(1, 1.0), 1000);
    assert_int_equal(boinc_backoff_ms(4, 1.0), 8000);
    assert_int_equal(boinc_backoff_ms(5, 1.0), 10000);
    assert_int_equal(boinc_backoff_ms(60, 1.0), 10000);
    assert_true(boinc_is_retryable(BOINC_E_TRANSPORT, 0));
    assert_true(boinc_is_retryable(BOINC_E_HTTP, 500));
    assert_true(boinc_is_retryable(BOINC_E_HTTP, 503));
    assert_false(boinc_is_retryable(BOINC_E_HTTP, 404));
    assert_false(boinc_is_retryable(BOINC_E_SERVER, 200));
    assert_false(boinc_is_retryable(BOINC_E_PARSE, 200));
}

static void test_scrub_secret(void **state)
{
    (void)state;
    boinc_error e = no_error();
    boinc_fail(&e, BOINC_E_TRANSPORT, 0, "x SECRET y SECRET");
    boinc_scrub_secret(&e, "SECRET");
    assert_string_equal(e.msg, "x *** y ***");
    boinc_error_clear(&e);
    assert_null(e.msg);
    assert_int_equal(e.code, BOINC_OK);
}

/* ---- the upload form body (boinc_upload.c) ---- */

/* Read a whole body through boinc_upload_body_read, step bytes at a
 * time: the bytes, or NULL when the callback aborted. */
static char *read_body(upload_body *b, size_t step, size_t *len)
{
    size_t cap = (size_t)boinc_upload_body_size(b) + 1, n = 0;
    char *out = malloc(cap + step);
    assert_non_null(out);
    for (;;) {
        size_t r = boinc_upload_body_read(out + n, 1, step, b);
        if (r == CURL_READFUNC_ABORT) {
            free(out);
            return NULL;
        }
        if (r == 0)
            break;
        assert_true(r <= step);
        n += r;
        assert_true(n < cap);
    }
    *len = n;
    return out;
}

static char *write_temp(const char *dir, const char *name, const char *text)
{
    char *path = malloc(strlen(dir) + strlen(name) + 2);
    assert_non_null(path);
    sprintf(path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fputs(text, f) >= 0, 1);
    assert_int_equal(fclose(f), 0);
    return path;
}

/* The body is the multipart form libcurl's form API would send: the
 * request field, one part per file with its base name escaped as a
 * browser does, a Content-Length that matches, the same bytes after a
 * rewind and whatever the read sizes. */
static void test_upload_body_bytes(void **state)
{
    (void)state;
    char dir[] = "/tmp/test_boinc_body.XXXXXX";
    assert_non_null(mkdtemp(dir));
    char *plain = write_temp(dir, "in.dat", "hello");
    char md5[FILES_MD5_HEX_LEN + 1];
    assert_int_equal(files_md5_hex_mem("hello", 5, md5), 0);
    boinc_upload_part parts[] = {
        { "/x/a\"b\r\nc.txt", "kept", 4, NULL },
        { plain, NULL, 5, md5 },
    };
    upload_fault fault = { 0, NULL };
    upload_body *b = boinc_upload_body_new("<r>&amp;</r>", parts, 2, &fault);
    assert_non_null(b);
    const char *ct = boinc_upload_body_type(b);
    const char *prefix = "Content-Type: multipart/form-data; boundary=";
    assert_memory_equal(ct, prefix, strlen(prefix));
    const char *bd = ct + strlen(prefix);
    assert_int_equal(strlen(bd), 40);
    assert_int_equal(strspn(bd, "-"), 24);
    assert_int_equal(strspn(bd + 24, "0123456789abcdef"), 16);
    char expect[2048];
    snprintf(expect, sizeof expect,
             "--%s\r\nContent-Disposition: form-data; name=\"request\"\r\n\r\n<r>&amp;</r>"
             "\r\n--%s\r\nContent-Disposition: form-data; name=\"file_0\"; "
             "filename=\"a%%22b%%0D%%0Ac.txt\"\r\nContent-Type: application/octet-stream\r\n\r\nkept"
             "\r\n--%s\r\nContent-Disposition: form-data; name=\"file_1\"; "
             "filename=\"in.dat\"\r\nContent-Type: application/octet-stream\r\n\r\nhello"
             "\r\n--%s--\r\n", bd, bd, bd, bd);
    assert_int_equal(boinc_upload_body_size(b), (long long)strlen(expect));
    size_t steps[] = { 65536, 1, 7, 100 };
    for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++) {
        if (i > 0)
            assert_int_equal(boinc_upload_body_seek(b, 0, SEEK_SET), CURL_SEEKFUNC_OK);
        size_t len = 0;
        char *got = read_body(b, steps[i], &len);
        assert_non_null(got);
        assert_int_equal(len, strlen(expect));
        assert_memory_equal(got, expect, len);
        free(got);
    }
    assert_int_equal(boinc_upload_body_seek(b, 5, SEEK_SET), CURL_SEEKFUNC_CANTSEEK);
    assert_int_equal(fault.failed, 0);
    boinc_upload_body_free(b);
    unlink(plain);
    free(plain);
    rmdir(dir);
}

/* A file that changed after it was hashed never completes the body. */
static void test_upload_body_changed_file(void **state)
{
    (void)state;
    char dir[] = "/tmp/test_boinc_body.XXXXXX";
    assert_non_null(mkdtemp(dir));
    char md5[FILES_MD5_HEX_LEN + 1];
    assert_int_equal(files_md5_hex_mem("hello", 5, md5), 0);
    struct { const char *text; const char *why; } cases[] = {
        { "jello", "its MD5 is no longer" },
        { "hel", "it is shorter" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *path = write_temp(dir, "in.dat", cases[i].text);
        boinc_upload_part part = { path, NULL, 5, md5 };
        upload_fault fault = { 0, NULL };
        upload_body *b = boinc_upload_body_new("<r/>", &part, 1, &fault);
        assert_non_null(b);
        size_t len = 0;
        assert_null(read_body(b, 4096, &len));
        assert_int_equal(fault.failed, 1);
        assert_non_null(strstr(fault.msg, cases[i].why));
        assert_non_null(strstr(fault.msg, path));
        free(fault.msg);
        boinc_upload_body_free(b);
        unlink(path);
        free(path);
    }
    boinc_upload_part gone = { "/nonexistent/in.dat", NULL, 5, md5 };
    upload_fault fault = { 0, NULL };
    upload_body *b = boinc_upload_body_new("<r/>", &gone, 1, &fault);
    size_t len = 0;
    assert_null(read_body(b, 4096, &len));
    assert_non_null(strstr(fault.msg, "cannot read input file /nonexistent/in.dat"));
    free(fault.msg);
    boinc_upload_body_free(b);
    rmdir(dir);
}

static void test_argument_checks_without_network(void **state)
{
    (void)state;
    boinc_client *c = boinc_client_new(NULL);
    assert_non_null(c);
    boinc_error e = no_error();
    boinc_project no_slash = { "http://127.0.0.1:9/p", "k" };
    assert_int_equal(boinc_ping(c, &no_slash, &e), BOINC_E_BADARG);
    assert_one_line(e.msg);
    boinc_project p = { "http://127.0.0.1:9/p/", "k" };
    long id = 0;
    assert_int_equal(boinc_create_batch(c, &p, "", "app", 0, &id, &e),
                     BOINC_E_BADARG);
    assert_int_equal(boinc_create_batch(c, &p, "b", NULL, 0, &id, &e),
                     BOINC_E_BADARG);
    const char *names[] = { "a", "" };
    assert_int_equal(boinc_abort_jobs(c, &p, names, 2, &e), BOINC_E_BADARG);
    assert_int_equal(boinc_get_output_file(c, &p, "j", -1, 1, NULL, &e),
                     BOINC_E_BADARG);
    assert_int_equal(boinc_query_batch_jobs(c, &p, 0, NULL, NULL, &e),
                     BOINC_E_BADARG);
    boinc_error_clear(&e);
    assert_string_equal(boinc_code_name(BOINC_E_TRANSPORT), "transport error");
    boinc_options o;
    boinc_options_default(&o);
    assert_int_equal(o.connect_timeout_ms, 10000);
    assert_int_equal(o.total_timeout_ms, 300000);
    assert_int_equal(o.retry_budget_ms, 60000);
    assert_int_equal(o.tls_verify, 1);
    boinc_client_free(c);
}

int main(void)
{
    if (boinc_global_init() != 0)
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_success_replies),
        cmocka_unit_test(test_upload_body_bytes),
        cmocka_unit_test(test_upload_body_changed_file),
        cmocka_unit_test(test_server_errors_keep_server_text),
        cmocka_unit_test(test_top_level_errors),
        cmocka_unit_test(test_multiline_error_squashed),
        cmocka_unit_test(test_unescaped_markup_in_error),
        cmocka_unit_test(test_non_fatal_php_error_ignored),
        cmocka_unit_test(test_php_fatal_errors_never_success),
        cmocka_unit_test(test_truncated_and_garbage),
        cmocka_unit_test(test_create_and_submit_batch_ids),
        cmocka_unit_test(test_templates),
        cmocka_unit_test(test_query_batch2),
        cmocka_unit_test(test_query_batch2_stream_takes_real_replies),
        cmocka_unit_test(test_query_batch2_stream_any_split),
        cmocka_unit_test(test_query_batch2_stream_irregular),
        cmocka_unit_test(test_query_batch2_plain_and_xml_agree),
        cmocka_unit_test(test_query_batch2_long_names_in_pool),
        cmocka_unit_test(test_query_batch2_count_mismatch),
        cmocka_unit_test(test_query_batch2_unescaped_ampersand),
        cmocka_unit_test(test_completed_job_done),
        cmocka_unit_test(test_completed_job_error_and_aborted),
        cmocka_unit_test(test_query_batches_with_php_warnings),
        cmocka_unit_test(test_query_batch_job_names),
        cmocka_unit_test(test_query_files),
        cmocka_unit_test(test_get_output_error_bodies),
        cmocka_unit_test(test_request_ping_and_simple),
        cmocka_unit_test(test_request_submit_batch_escaping),
        cmocka_unit_test(test_request_lists),
        cmocka_unit_test(test_output_url_escaped),
        cmocka_unit_test(test_normalize_url),
        cmocka_unit_test(test_squash_and_unescape),
        cmocka_unit_test(test_number_parsing),
        cmocka_unit_test(test_retry_policy),
        cmocka_unit_test(test_scrub_secret),
        cmocka_unit_test(test_argument_checks_without_network),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    boinc_global_cleanup();
    return failed ? 1 : 0;
}
