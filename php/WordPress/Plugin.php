<?php

namespace Ephpm\WordPress;

/**
 * The companion plugin (plugin/ephpm-object-cache.php): a page under Tools to enable,
 * disable and flush the object cache, a Site Health test and Site Health information.
 * Every change is an admin-post request with a nonce, allowed to users who can manage
 * options (network options on a multisite, where the drop-in serves every site).
 */
final class Plugin
{
    public const PAGE = 'ephpm-object-cache';
    private const DOMAIN = 'ephpm-object-cache';
    /** admin-post actions: ephpm_object_cache_<name>. */
    private const ACTIONS = ['enable', 'disable', 'flush'];

    public function __construct(private Status $status)
    {
    }

    public function register(): void
    {
        add_filter('site_status_tests', [$this, 'siteStatusTests']);
        add_filter('debug_information', [$this, 'debugInformation']);
        add_action(is_multisite() ? 'network_admin_menu' : 'admin_menu', [$this, 'menu']);
        foreach (self::ACTIONS as $action) {
            add_action("admin_post_ephpm_object_cache_$action", function () use ($action): void {
                $this->handle($action);
                exit;
            });
        }
    }

    public function capability(): string
    {
        return is_multisite() ? 'manage_network_options' : 'manage_options';
    }

    /** @param array $tests WordPress's Site Health tests. */
    public function siteStatusTests($tests): array
    {
        $tests = (array) $tests;
        $tests['direct']['ephpm_object_cache'] = [
            'label' => __('ephpm object cache', self::DOMAIN),
            'test' => [$this, 'siteHealthTest'],
        ];
        return $tests;
    }

    /**
     * Good when our drop-in is in place and the store answers; critical when it is in
     * place and the store cannot be used (the site runs on its request cache);
     * recommended when it is not in place (missing, outdated, another's, or disabled).
     */
    public function siteHealthTest(): array
    {
        $state = $this->status->dropIn()->state();
        $problem = $this->status->storeProblem();
        if ($state === DropIn::OURS && $problem === null && !$this->status->config()->disabled) {
            return $this->result('good', __('The ephpm object cache is in use', self::DOMAIN), sprintf(
                /* translators: %s: the store's DSN */
                __('Every PHP process of the site shares the object cache in %s.', self::DOMAIN),
                $this->status->dsn(),
            ));
        }
        if ($state === DropIn::OURS) {
            return $this->result('critical', __('The ephpm object cache cannot reach its store', self::DOMAIN), sprintf(
                /* translators: %s: why the store cannot be used */
                __('WordPress runs on its request-local cache until this is fixed: %s', self::DOMAIN),
                $problem,
            ));
        }
        $why = [
            DropIn::MISSING => __('The ephpm drop-in is not in wp-content: enable it on the ephpm object cache page under Tools, or with wp ephpm enable.', self::DOMAIN),
            DropIn::OUTDATED => __('wp-content/object-cache.php is an older copy of the ephpm drop-in: enable it again to update it.', self::DOMAIN),
            DropIn::FOREIGN => __('wp-content/object-cache.php is another object cache\'s drop-in, so ephpm\'s is not in use.', self::DOMAIN),
        ][$state];
        return $this->result('recommended', __('The ephpm object cache is not in use', self::DOMAIN), $why);
    }

    /** Site Health → Info: a section of its own. */
    public function debugInformation($info): array
    {
        $fields = [];
        foreach ($this->status->report() as $label => $value) {
            $fields[sanitize_key($label)] = ['label' => $label, 'value' => $value];
        }
        $info = (array) $info;
        $info['ephpm-object-cache'] = ['label' => __('ephpm object cache', self::DOMAIN), 'fields' => $fields];
        return $info;
    }

    public function menu(): void
    {
        add_management_page(
            __('ephpm object cache', self::DOMAIN),
            __('Object cache (ephpm)', self::DOMAIN),
            $this->capability(),
            self::PAGE,
            [$this, 'page'],
        );
    }

    /** The Tools page: the report, a result from the last action, and three buttons. */
    public function page(): void
    {
        if (!current_user_can($this->capability())) {
            return;
        }
        echo '<div class="wrap"><h1>' . esc_html__('ephpm object cache', self::DOMAIN) . '</h1>';
        $done = isset($_GET['ephpm_result']) ? sanitize_key((string) $_GET['ephpm_result']) : '';
        $messages = [
            'enabled' => __('The drop-in is in place; this site\'s cache was emptied, as it may hold values from before.', self::DOMAIN),
            'disabled' => __('The drop-in was removed.', self::DOMAIN),
            'flushed' => __('This site\'s object cache was emptied.', self::DOMAIN),
            'refused' => __('Nothing was changed: wp-content/object-cache.php is another object cache\'s drop-in, or it could not be written.', self::DOMAIN),
            'failed' => __('The store could not be reached; nothing was emptied.', self::DOMAIN),
        ];
        if (isset($messages[$done])) {
            $class = in_array($done, ['refused', 'failed'], true) ? 'notice-error' : 'notice-success';
            echo '<div class="notice ' . esc_attr($class) . '"><p>' . esc_html($messages[$done]) . '</p></div>';
        }
        echo '<table class="widefat striped"><tbody>';
        foreach ($this->status->report() as $label => $value) {
            echo '<tr><th scope="row">' . esc_html($label) . '</th><td>' . esc_html($value) . '</td></tr>';
        }
        echo '</tbody></table>';
        $state = $this->status->dropIn()->state();
        $buttons = ['flush' => __('Flush the cache', self::DOMAIN)];
        if ($state !== DropIn::FOREIGN) {
            $buttons += $state === DropIn::OURS ? ['disable' => __('Disable', self::DOMAIN)] : ['enable' => __('Enable', self::DOMAIN)];
        }
        foreach ($buttons as $action => $label) {
            echo '<form method="post" action="' . esc_url(admin_url('admin-post.php')) . '" style="display:inline-block;margin:1em 1em 0 0">';
            echo '<input type="hidden" name="action" value="' . esc_attr("ephpm_object_cache_$action") . '" />';
            wp_nonce_field("ephpm_object_cache_$action");
            echo '<button type="submit" class="button">' . esc_html($label) . '</button></form>';
        }
        echo '</div>';
    }

    /**
     * One admin-post action, after the capability and nonce checks (either failing ends
     * the request through wp_die() before anything is done), then back to the page.
     */
    public function handle(string $action): void
    {
        if (!in_array($action, self::ACTIONS, true) || !current_user_can($this->capability())) {
            wp_die(esc_html__('You are not allowed to manage the object cache.', self::DOMAIN), '', ['response' => 403]);
        }
        check_admin_referer("ephpm_object_cache_$action");
        try {
            $result = match ($action) {
                'enable' => $this->enable(),
                'disable' => $this->disable(),
                'flush' => $this->status->flush() ? 'flushed' : 'failed',
            };
        } catch (\RuntimeException $e) {
            error_log('ephpm object cache: ' . $e->getMessage());
            $result = 'refused';
        }
        $page = is_multisite() ? network_admin_url('tools.php') : admin_url('tools.php');
        wp_safe_redirect(add_query_arg(['page' => self::PAGE, 'ephpm_result' => $result], $page));
    }

    private function enable(): string
    {
        $this->status->dropIn()->enable();
        $this->status->flush(); // values from before: WordPress wrote to its database without the cache
        return 'enabled';
    }

    private function disable(): string
    {
        $this->status->dropIn()->disable();
        return 'disabled';
    }

    private function result(string $status, string $label, string $description): array
    {
        return [
            'label' => $label,
            'status' => $status,
            'badge' => ['label' => __('Performance', self::DOMAIN), 'color' => 'blue'],
            'description' => '<p>' . esc_html($description) . '</p>',
            'actions' => $status === 'good' ? '' : sprintf(
                '<p><a href="%s">%s</a></p>',
                esc_url(add_query_arg(['page' => self::PAGE], is_multisite() ? network_admin_url('tools.php') : admin_url('tools.php'))),
                esc_html__('Manage the ephpm object cache', self::DOMAIN),
            ),
            'test' => 'ephpm_object_cache',
        ];
    }
}
