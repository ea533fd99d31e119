<?php
/**
 * WordPress from the command line, on the site of wordpress-site.sh:
 *
 *   php … wordpress-cli.php SITE install TITLE     wp_install(), pretty permalinks (from populate on)
 *   php … wordpress-cli.php SITE populate          200 posts in 8 categories with 20 tags,
 *                                                  5 pages, 3 comments on each of 40 posts
 *   php … wordpress-cli.php SITE post TITLE        one published post; prints its id
 *   php … wordpress-cli.php SITE cache             the class of $wp_object_cache
 *
 * Loaded as any WP-CLI run is, through wp-load.php: the object-cache drop-in in the
 * site's wp-content, when there, is this process's cache too.
 */
[, $site, $command] = $argv + [null, null, null];
$_SERVER['HTTP_HOST'] = '127.0.0.1';
$_SERVER['REQUEST_URI'] = '/';
if ($command === 'install') {
    define('WP_INSTALLING', true);
}
require $site . '/wp-load.php';

switch ($command) {
    case 'install':
        require_once ABSPATH . 'wp-admin/includes/upgrade.php';
        $result = wp_install($argv[3], 'admin', 'admin@example.invalid', true, '', 'ephpm-test-password');
        update_option('permalink_structure', '/%postname%/');
        update_option('blogdescription', 'A WordPress behind nginx and php-fpm');
        echo "installed, user {$result['user_id']}\n";
        break;
    case 'populate':
        wp_defer_term_counting(true);
        mt_srand(25);
        $categories = [];
        foreach (['News', 'Releases', 'Engineering', 'Operations', 'Community', 'Events', 'Tutorials', 'Opinion'] as $name) {
            $categories[] = wp_insert_term($name, 'category')['term_id'];
        }
        $tags = [];
        for ($i = 1; $i <= 20; $i++) {
            $tags[] = "topic-$i";
        }
        $words = explode(' ', 'cache store shared memory worker request query page post lock session redis cluster host fleet '
            . 'process latency throughput index archive theme plugin option transient term comment author');
        $text = static function (int $n) use ($words): string {
            $out = [];
            for ($i = 0; $i < $n; $i++) {
                $out[] = $words[mt_rand(0, count($words) - 1)];
            }
            return ucfirst(implode(' ', $out)) . '.';
        };
        $time = strtotime('2025-01-01 09:00:00');
        for ($i = 1; $i <= 200; $i++) {
            $paragraphs = [];
            for ($p = 0; $p < 5; $p++) {
                $paragraphs[] = "<!-- wp:paragraph -->\n<p>" . $text(40) . "</p>\n<!-- /wp:paragraph -->";
            }
            $id = wp_insert_post([
                'post_title' => "Post $i: " . $text(4),
                'post_content' => implode("\n\n", $paragraphs),
                'post_excerpt' => '',
                'post_status' => 'publish',
                'post_author' => 1,
                'post_date' => date('Y-m-d H:i:s', $time + $i * 3600 * 7),
                'post_category' => [$categories[$i % 8], $categories[($i * 3) % 8]],
                'tags_input' => [$tags[$i % 20], $tags[($i * 7) % 20], $tags[($i * 11) % 20]],
            ], true);
            if (is_wp_error($id)) {
                fwrite(STDERR, $id->get_error_message() . "\n");
                exit(1);
            }
            if ($i > 160) {
                for ($c = 1; $c <= 3; $c++) {
                    wp_insert_comment([
                        'comment_post_ID' => $id, 'comment_author' => "Reader $c", 'comment_author_email' => "reader$c@example.invalid",
                        'comment_content' => $text(25), 'comment_approved' => 1,
                        'comment_date' => date('Y-m-d H:i:s', $time + $i * 3600 * 7 + $c * 600),
                    ]);
                }
            }
        }
        foreach (['About', 'Contact', 'Documentation', 'Download', 'Support'] as $title) {
            wp_insert_post(['post_type' => 'page', 'post_title' => $title, 'post_status' => 'publish',
                'post_content' => '<p>' . $text(60) . '</p>']);
        }
        wp_defer_term_counting(false);
        // Here, not at install: the taxonomies' rewrite rules follow the permalink
        // structure as it was when they were registered, at this process's start.
        flush_rewrite_rules(true);
        echo "populated\n";
        break;
    case 'post':
        $id = wp_insert_post(['post_title' => $argv[3], 'post_content' => '<p>Written by a CLI process.</p>',
            'post_status' => 'publish', 'post_author' => 1], true);
        echo is_wp_error($id) ? $id->get_error_message() : $id, "\n";
        break;
    case 'cache':
        echo get_class($GLOBALS['wp_object_cache']), wp_using_ext_object_cache() ? ' ext' : '', "\n";
        break;
    default:
        fwrite(STDERR, "unknown command\n");
        exit(2);
}
