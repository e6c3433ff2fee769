package io.stasis.sdk;

import java.util.ArrayList;
import java.util.List;

/**
 * The templates sandboxes are created from, from {@link StasisClient#templates()}.
 *
 * <pre>{@code
 * for (TemplateInfo t : client.templates().list()) {
 *     System.out.println(t.name() + " " + t.status());
 * }
 * }</pre>
 */
public final class Templates {
    private final HttpTransport transport;

    Templates(HttpTransport transport) {
        this.transport = transport;
    }

    /** Every template, following the pages. */
    public List<TemplateInfo> list() {
        var all = new ArrayList<TemplateInfo>();
        page(null).all().forEach(all::add);
        return all;
    }

    private Page<TemplateInfo> page(String cursor) {
        Page.Body<TemplateInfo> body = transport.page(
                transport.call("GET", "/v1/templates").query(Query.of().add("cursor", cursor)), TemplateInfo.class);
        return new Page<>(body.items(), body.nextCursor(), this::page);
    }
}
