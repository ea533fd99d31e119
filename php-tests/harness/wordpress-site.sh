# A real WordPress site in a temporary folder, behind nginx and php-fpm on 127.0.0.1:
# sourced by wordpress-pages-suite.sh and bench/wordpress.sh (after lib.sh). Core is
# Debian's WordPress 6.1 unpacked by `make deps` (target/wordpress, never modified), the
# theme Debian's twentytwentyone (target/wordpress-theme); the database a private MariaDB
# (lib.sh's start_mariadb). Every server listens on 127.0.0.1 or a unix socket in the
# folder and is stopped by its pid.
wp_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
wp_core=$wp_root/target/wordpress/usr/share/wordpress
wp_theme=$wp_root/target/wordpress-theme/usr/share/wordpress/wp-content/themes/twentytwentyone
# What WordPress needs of PHP once -n has dropped Debian's conf.d, and OPcache, as any
# production php-fpm has it. Mail goes nowhere (wp_install() sends one).
wp_ini=(-n -d extension=mysqlnd -d extension=mysqli -d extension=mbstring -d extension=ctype -d extension=iconv
        -d extension=xml -d extension=dom -d extension=simplexml -d extension=fileinfo -d extension=tokenizer
        "${opcache[@]}" -d opcache.enable=1 -d opcache.memory_consumption=64
        -d sendmail_path=/bin/true -d memory_limit=256M)

# wp_have_files: whether core and the theme are unpacked (make deps).
wp_have_files() { [ -f "$wp_core/wp-settings.php" ] && [ -f "$wp_theme/style.css" ]; }

# wp_site DIR URL: the site's tree in DIR/site: core's top-level scripts copied (PHP
# resolves a symlinked script's __DIR__ to its target, which would make Debian's
# wp-config.php the site's), wp-admin and wp-includes linked, a wp-config.php of its own
# on DIR/mysql.sock, and a wp-content with the theme and the mu-plugin
# wordpress-queries.php. DIR/site/cache-config.php, when there, is read by wp-config.php
# (the object cache's constants of the moment).
wp_site() {
    local dir=$1 url=$2 site=$1/site f
    mkdir -p "$site/wp-content/themes" "$site/wp-content/mu-plugins" "$site/wp-content/plugins" "$site/wp-content/uploads"
    for f in "$wp_core"/*.php; do
        [ "$(basename "$f")" = wp-config.php ] || cp "$f" "$site/"
    done
    ln -s "$wp_core/wp-admin" "$site/wp-admin"
    ln -s "$wp_core/wp-includes" "$site/wp-includes"
    ln -s "$wp_theme" "$site/wp-content/themes/twentytwentyone"
    ln -s "$wp_root/php-tests/harness/wordpress-queries.php" "$site/wp-content/mu-plugins/queries.php"
    cat > "$site/wp-config.php" <<PHP
<?php
define('DB_NAME', 'wordpress');
define('DB_USER', 'root');
define('DB_PASSWORD', '');
define('DB_HOST', 'localhost:$dir/mysql.sock');
define('DB_CHARSET', 'utf8mb4');
define('DB_COLLATE', '');
foreach (['AUTH_KEY', 'SECURE_AUTH_KEY', 'LOGGED_IN_KEY', 'NONCE_KEY', 'AUTH_SALT', 'SECURE_AUTH_SALT', 'LOGGED_IN_SALT', 'NONCE_SALT'] as \$k) {
    define(\$k, "ephpm-test-\$k");
}
\$table_prefix = 'wp_';
define('WP_HOME', '$url');
define('WP_SITEURL', '$url');
define('WP_DEFAULT_THEME', 'twentytwentyone');
define('DISABLE_WP_CRON', true);
define('AUTOMATIC_UPDATER_DISABLED', true);
define('WP_DEBUG', false);
if (is_file(__DIR__ . '/cache-config.php')) {
    require __DIR__ . '/cache-config.php';
}
if (!defined('ABSPATH')) {
    define('ABSPATH', __DIR__ . '/');
}
require_once ABSPATH . 'wp-settings.php';
PHP
}

# wp_cli DIR INI... -- ARGS: runs php-tests/harness/wordpress-cli.php on the site with
# WordPress's ini plus INI (the extension, its store).
wp_cli() {
    local dir=$1; shift
    local ini=()
    while [ $# -gt 0 ] && [ "$1" != -- ]; do ini+=("$1"); shift; done
    shift
    php "${wp_ini[@]}" "${ini[@]}" "$wp_root/php-tests/harness/wordpress-cli.php" "$dir/site" "$@"
}

# wp_start_fpm DIR WORKERS INI...: php-fpm (pm static, WORKERS workers) on DIR/fpm.sock,
# run as this user, its pid in DIR/fpm.pid, PHP's error log DIR/php-error.log, the
# master's DIR/fpm.log; returns once the socket is there.
wp_start_fpm() {
    local dir=$1 workers=$2
    shift 2
    rm -f "$dir/fpm.sock" "$dir/fpm.pid"
    cat > "$dir/fpm.conf" <<CONF
[global]
pid = $dir/fpm.pid
error_log = $dir/fpm.log
daemonize = no
[site]
user = $(id -un)
group = $(id -gn)
listen = $dir/fpm.sock
pm = static
pm.max_children = $workers
catch_workers_output = yes
php_admin_value[error_log] = $dir/php-error.log
php_admin_flag[log_errors] = on
CONF
    setsid "$fpm" "${wp_ini[@]}" "$@" -y "$dir/fpm.conf" -R -F >>"$dir/fpm.log" 2>&1 &
    disown $!
    for _ in $(seq 200); do [ -S "$dir/fpm.sock" ] && [ -s "$dir/fpm.pid" ] && return 0; sleep 0.05; done
    return 1
}

# wp_stop_fpm DIR: stops php-fpm by pid and waits until it is gone.
wp_stop_fpm() {
    local pid
    [ -s "$1/fpm.pid" ] || return 0
    pid=$(cat "$1/fpm.pid"); kill -QUIT "$pid" 2>/dev/null
    for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.05; done
    kill -9 "$pid" 2>/dev/null
    rm -f "$1/fpm.pid"
}

# wp_start_nginx DIR PORT: nginx (prefix DIR, its pid, logs and temp files there) on
# 127.0.0.1:PORT serving DIR/site through DIR/fpm.sock; returns once it answers.
wp_start_nginx() {
    local dir=$1 port=$2
    mkdir -p "$dir/nginx"
    cat > "$dir/nginx.conf" <<CONF
worker_processes 1;
pid $dir/nginx.pid;
error_log $dir/nginx-error.log;
user $(id -un) $(id -gn);
events { worker_connections 1024; }
http {
    include /etc/nginx/mime.types;
    access_log off;
    client_body_temp_path $dir/nginx/body;
    fastcgi_temp_path $dir/nginx/fastcgi;
    proxy_temp_path $dir/nginx/proxy;
    uwsgi_temp_path $dir/nginx/uwsgi;
    scgi_temp_path $dir/nginx/scgi;
    server {
        listen 127.0.0.1:$port;
        root $dir/site;
        index index.php;
        location / { try_files \$uri \$uri/ /index.php?\$args; }
        location ~ \.php\$ {
            # Debian's fastcgi_params gives HTTP_HOST without the port, which WordPress
            # would redirect to its home URL's host and port: the parameters here.
            fastcgi_param QUERY_STRING \$query_string;
            fastcgi_param REQUEST_METHOD \$request_method;
            fastcgi_param CONTENT_TYPE \$content_type;
            fastcgi_param CONTENT_LENGTH \$content_length;
            fastcgi_param SCRIPT_NAME \$fastcgi_script_name;
            fastcgi_param SCRIPT_FILENAME \$document_root\$fastcgi_script_name;
            fastcgi_param REQUEST_URI \$request_uri;
            fastcgi_param DOCUMENT_URI \$document_uri;
            fastcgi_param DOCUMENT_ROOT \$document_root;
            fastcgi_param SERVER_PROTOCOL \$server_protocol;
            fastcgi_param GATEWAY_INTERFACE CGI/1.1;
            fastcgi_param REMOTE_ADDR \$remote_addr;
            fastcgi_param REMOTE_PORT \$remote_port;
            fastcgi_param SERVER_ADDR \$server_addr;
            fastcgi_param SERVER_PORT \$server_port;
            fastcgi_param SERVER_NAME 127.0.0.1;
            fastcgi_param HTTP_HOST \$http_host;
            fastcgi_pass unix:$dir/fpm.sock;
        }
    }
}
CONF
    nginx -p "$dir/nginx" -c "$dir/nginx.conf" -g 'daemon on;' 2>>"$dir/nginx-error.log" || return 1
    for _ in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:$port/robots.txt" && return 0; sleep 0.05; done
    return 1
}

# wp_stop_nginx DIR: stops nginx by pid and waits until it is gone.
wp_stop_nginx() {
    local pid
    [ -s "$1/nginx.pid" ] || return 0
    pid=$(cat "$1/nginx.pid"); kill -QUIT "$pid" 2>/dev/null
    for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.05; done
    kill -9 "$pid" 2>/dev/null
}
