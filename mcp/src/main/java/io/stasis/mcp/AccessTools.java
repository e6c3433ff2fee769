package io.stasis.mcp;

import static io.stasis.mcp.JsonSchemas.integer;
import static io.stasis.mcp.JsonSchemas.object;
import static io.stasis.mcp.JsonSchemas.string;
import static io.stasis.mcp.JsonSchemas.stringArray;

import io.stasis.mcp.StasisTool.Kind;
import io.stasis.sdk.TenantInfo;
import io.stasis.sdk.TenantQuota;
import io.stasis.sdk.TokenInfo;
import io.stasis.sdk.TokenRequest;
import java.time.Duration;
import java.util.List;
import java.util.stream.Collectors;

/**
 * Who may do what: scoped tokens (one sandbox or volume, some permissions: what to hand another
 * agent instead of the key), and, with the operator's root key, tenants and their quotas.
 */
final class AccessTools {
    private AccessTools() {
    }

    static List<StasisTool> all() {
        return List.of(tokenCreate(), tokenList(), tokenRevoke(), tenantList(), tenantCreate(), tenantQuota());
    }

    private static String describe(TokenInfo t) {
        String target = t.scope().sandbox() != null ? "sandbox " + t.scope().sandbox() : "volume " + t.scope().volume();
        return t.id() + (t.name() == null ? "" : " '" + t.name() + "'") + ": " + target + ", " + String.join(" ", t.permissions())
                + (t.expiresAt() == null ? "" : ", until " + t.expiresAt());
    }

    private static StasisTool tokenCreate() {
        var schema = object()
                .optional("sandbox", string("The one sandbox (name or id) the token may act on. Give this or 'volume'."))
                .optional("volume", string("The one volume (name or id) the token may act on, through the S3 endpoint."))
                .required("permissions", stringArray("What it may do: for a sandbox exec, files:read, files:write, sandbox:read, "
                        + "sandbox:lifecycle, sandbox:delete, checkpoints, network, previews; for a volume volume:read, volume:write."))
                .optional("ttlSeconds", integer("How long it works (default: the server's; at most 30 days).", 60, 2_592_000))
                .optional("name", string("A name to recognise it by in token_list."))
                .build();
        return new StasisTool("token_create", "Create scoped token",
                "Issues a token that can do only what its permissions allow with one sandbox or one volume, for a while: hand it to "
                        + "another agent or program instead of your key. The token's secret is in the answer only this once.",
                schema, Kind.CHANGE, (client, args) -> {
                    String sandbox = args.optString("sandbox");
                    String volume = args.optString("volume");
                    if ((sandbox == null) == (volume == null)) throw new InvalidArgumentsException("give 'sandbox' or 'volume', one of them");
                    String[] permissions = args.strings("permissions").toArray(String[]::new);
                    var request = sandbox != null ? TokenRequest.forSandbox(sandbox, permissions) : TokenRequest.forVolume(volume, permissions);
                    if (args.has("ttlSeconds")) request = request.withTtl(Duration.ofSeconds(args.integer("ttlSeconds", 0, 60, 2_592_000)));
                    if (args.optString("name") != null) request = request.withName(args.optString("name"));
                    TokenInfo token = client.tokens().issue(request);
                    return ToolResult.of("issued " + describe(token) + "\nsecret (shown once): " + token.token(), token);
                });
    }

    private static StasisTool tokenList() {
        return new StasisTool("token_list", "List scoped tokens", "Lists the scoped tokens of your tenant that have not expired "
                + "(never their secrets).", object().build(), Kind.READ, (client, args) -> {
                    var tokens = client.tokens().list();
                    String text = tokens.isEmpty() ? "no tokens" : tokens.stream().map(AccessTools::describe).collect(Collectors.joining("\n"));
                    return ToolResult.list(text, tokens);
                });
    }

    private static StasisTool tokenRevoke() {
        return new StasisTool("token_revoke", "Revoke scoped token", "Revokes a scoped token: it stops working with the next request.",
                object().required("token", string("The token's id (tok_...).")).build(), Kind.DESTRUCTIVE, (client, args) -> {
                    client.tokens().revoke(args.string("token"));
                    return ToolResult.text("revoked token " + args.string("token"));
                });
    }

    private static String describe(TenantInfo t) {
        return t.id() + " " + t.name() + ": " + t.usage().runningSandboxes() + "/" + limit(t.quota().runningSandboxes()) + " running, "
                + t.usage().memoryMb() + "/" + limit(t.quota().memoryMb()) + " MB memory, " + t.usage().diskMb() + "/"
                + limit(t.quota().diskMb()) + " MB disk";
    }

    private static String limit(Number n) {
        return n == null ? "-" : n.toString();
    }

    private static StasisTool tenantList() {
        return new StasisTool("tenant_list", "List tenants", "Lists the tenants with their quotas and usage (the operator's root key "
                + "only; another key sees its own tenant with the API's GET /v1/tenants/{id}).", object().build(), Kind.READ,
                (client, args) -> {
                    var tenants = client.tenants().list();
                    return ToolResult.list(tenants.stream().map(AccessTools::describe).collect(Collectors.joining("\n")), tenants);
                });
    }

    private static StasisTool tenantCreate() {
        var schema = quotaSchema().required("name", string("The tenant's name: 1-63 of a-z 0-9 -.")).build();
        return new StasisTool("tenant_create", "Create tenant", "Makes a tenant (a customer whose sandboxes, volumes and keys no other "
                + "tenant sees) with a quota, and issues its first API key, shown in the answer only this once. Root key only.",
                schema, Kind.CHANGE, (client, args) -> {
                    TenantInfo tenant = client.tenants().create(args.string("name"), quota(args));
                    var key = client.tenants().issueKey(tenant.id());
                    return ToolResult.of("created tenant " + describe(tenant) + "\nAPI key (shown once): " + key.secret(), tenant);
                });
    }

    private static StasisTool tenantQuota() {
        var schema = quotaSchema().required("tenant", string("The tenant's id (ten_...).")).build();
        return new StasisTool("tenant_quota", "Set tenant quota", "Changes a tenant's quota: the fields given replace its own, the "
                + "others stay. Lowering a limit below the usage stops only new growth. Root key only.", schema, Kind.IDEMPOTENT,
                (client, args) -> {
                    TenantInfo tenant = client.tenants().updateQuota(args.string("tenant"), quota(args));
                    return ToolResult.of("quota of " + describe(tenant), tenant);
                });
    }

    private static JsonSchemas.ObjectSchema quotaSchema() {
        return object()
                .optional("runningSandboxes", integer("Sandboxes running, paused or in standby at once.", 0, 1_000_000))
                .optional("memoryMb", integer("The memory limits of those sandboxes, added up, in MB.", 0, Long.MAX_VALUE))
                .optional("diskMb", integer("The disk limits of all its sandboxes and its volumes, added up, in MB.", 0, Long.MAX_VALUE))
                .optional("runtimes", stringArray("The runtimes its sandboxes may run in, e.g. ['gvisor'] for gVisor only."))
                .optional("requestsPerSecond", integer("Its API calls a second, all its keys and tokens together.", 1, 1_000_000))
                .optional("requestBurst", integer("Calls at once after a quiet spell (default twice the rate).", 1, 1_000_000))
                .optional("createsPerMinute", integer("Its creates and forks a minute.", 1, 1_000_000));
    }

    private static TenantQuota quota(ToolArguments args) {
        return new TenantQuota(args.has("runningSandboxes") ? (int) args.integer("runningSandboxes", 0, 0, 1_000_000) : null,
                args.has("memoryMb") ? args.integer("memoryMb", 0, 0, Long.MAX_VALUE) : null,
                args.has("diskMb") ? args.integer("diskMb", 0, 0, Long.MAX_VALUE) : null,
                args.has("runtimes") ? args.strings("runtimes") : null,
                args.has("requestsPerSecond") ? (int) args.integer("requestsPerSecond", 0, 1, 1_000_000) : null,
                args.has("requestBurst") ? (int) args.integer("requestBurst", 0, 1, 1_000_000) : null,
                args.has("createsPerMinute") ? (int) args.integer("createsPerMinute", 0, 1, 1_000_000) : null);
    }
}
