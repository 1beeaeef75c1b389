/*
 * errpage.c - the HTML error page a real BOINC project's get_output.php
 * sends for a missing or bad parameter (captures 66/67), reproduced byte
 * for byte except that the captured project URL is replaced by ours.
 */
#include "emu.h"

#include <string.h>

static const char page_head[] =
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
    "    <h2>Unable to handle request</h2>\n";

static const char page_tail[] =
    "<center><a href=\"https://boinc.berkeley.edu\"><img src=http://127.0.0.1/test//img/pb_boinc.gif alt=\"Powered by BOINC\"></a></center><p><center>&copy; 2026  REPLACE WITH COPYRIGHT HOLDER</center>\n"
    "        <script src=\"http://127.0.0.1/test//bootstrap.min.js\"></script>\n"
    "        </div>\n"
    "        </body>\n"
    "        </html>\n"
    "    ";

/* Append src to sb with every "http://127.0.0.1/test/" replaced. */
static void put_with_url(strbuf *sb, const char *src)
{
    static const char captured[] = "http://127.0.0.1/test/";
    const char *p = src;
    const char *hit;
    while ((hit = strstr(p, captured)) != NULL) {
        strbuf_append(sb, p, (size_t)(hit - p));
        strbuf_puts(sb, G.project_url);
        p = hit + sizeof captured - 1;
    }
    strbuf_puts(sb, p);
}

void error_page(strbuf *sb, const char *param)
{
    put_with_url(sb, page_head);
    strbuf_printf(sb, "missing or bad parameter: %s<br>\n", param);
    put_with_url(sb, page_tail);
}
