package io.stasis.server.http;

import io.stasis.server.auth.Access;
import io.javalin.config.RoutesConfig;
import io.stasis.core.template.TemplateService;
import io.stasis.server.http.Views.ListView;
import io.stasis.server.http.Views.TemplateView;

/** {@code GET /v1/templates}: what sandboxes can be created from, and builds in progress. */
final class TemplateRoutes {
    private final TemplateService templates;

    TemplateRoutes(TemplateService templates) {
        this.templates = templates;
    }

    void register(RoutesConfig routes) {
        routes.get("/v1/templates", ctx -> ctx.json(new ListView<>(templates.list().stream().map(TemplateView::of).toList(), null)), Access.TENANT);
    }
}
