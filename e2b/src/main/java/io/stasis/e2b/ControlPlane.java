package io.stasis.e2b;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.databind.JsonNode;
import io.stasis.e2b.E2bErrors.E2bException;
import io.stasis.sdk.CreateSandboxRequest;
import io.stasis.sdk.ExecRequest;
import io.stasis.sdk.LifecycleUpdate;
import io.stasis.sdk.ListSandboxesRequest;
import io.stasis.sdk.NotFoundException;
import io.stasis.sdk.Sandbox;
import io.stasis.sdk.SandboxInfo;
import io.stasis.sdk.StasisClient;
import io.stasis.sdk.TokenRequest;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * E2B's control plane (its REST API: create, get, list, kill, timeout, pause, connect) onto
 * Stasis's sandboxes. A sandbox made here is a Stasis sandbox like any other; what E2B adds is kept
 * in Stasis's own fields: its template is the Stasis template of that name, its timeout the
 * sandbox's {@code maxAge}, its pause Stasis's standby (memory kept, no CPU), and its envd access
 * token a Stasis token scoped to the sandbox.
 */
final class ControlPlane {
    /** The envd protocol version Stasis answers as: the e2b SDKs enable their features by it. */
    static final String ENVD_VERSION = "0.5.7";
    static final String CLIENT_ID = "stasis";
    static final String DEFAULT_TEMPLATE = "base";
    private static final int DEFAULT_TIMEOUT_SECONDS = 300;
    /** What the envd token may do: everything envd does on the one sandbox. */
    private static final String[] ENVD_PERMISSIONS = {"sandbox:read", "exec", "files:read", "files:write"};
    private static final Duration ENVD_TOKEN_TTL = Duration.ofDays(30);
    /** Makes E2B's default user in a template that lacks it (Debian's useradd, else busybox's adduser). */
    private static final String ADD_DEFAULT_USER = "id " + EnvdCall.DEFAULT_USER + " >/dev/null 2>&1 || useradd -m -s /bin/bash -u 1000 "
            + EnvdCall.DEFAULT_USER + " 2>/dev/null || adduser -D -u 1000 " + EnvdCall.DEFAULT_USER;

    /** E2B's {@code Sandbox}: what create and connect answer. */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    record E2bSandbox(String sandboxID, String templateID, String clientID, String envdVersion, String envdAccessToken, String domain,
                      String alias) {
    }

    /** E2B's {@code SandboxDetail} and {@code ListedSandbox}. */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    record E2bSandboxDetail(String sandboxID, String templateID, String clientID, String alias, String startedAt, String endAt,
                            String state, double cpuCount, int memoryMB, int diskSizeMB, String envdVersion, Map<String, String> metadata,
                            String domain) {
    }

    /** Creates a sandbox from E2B's {@code NewSandbox}; answers its {@code Sandbox}. */
    E2bSandbox create(StasisClient client, JsonNode body) {
        String template = text(body, "templateID", DEFAULT_TEMPLATE);
        int timeout = body.path("timeout").isNumber() ? body.path("timeout").asInt() : DEFAULT_TIMEOUT_SECONDS;
        if (timeout < 0) throw new E2bException(400, "timeout must not be negative");
        var request = CreateSandboxRequest.builder().template(template).env(strings(body.path("envVars"), "envVars"))
                .metadata(strings(body.path("metadata"), "metadata"));
        boolean autoPause = body.path("autoPause").asBoolean(false);
        // E2B kills a sandbox at its timeout (unless it pauses it then): Stasis's maxAge deletes it at that age.
        if (!autoPause && timeout > 0) request.lifecycle(LifecycleUpdate.builder().maxAge(Duration.ofSeconds(timeout)).build());
        Sandbox sandbox = client.sandboxes().create(request.build());
        try {
            sandbox.exec(ExecRequest.builder("sh", "-c", ADD_DEFAULT_USER).user("root").timeout(Duration.ofSeconds(30)).build());
            return view(sandbox.info(), envdToken(client, sandbox.id()));
        } catch (RuntimeException e) {
            try {
                sandbox.delete();
            } catch (RuntimeException deleteFailure) {
                e.addSuppressed(deleteFailure);
            }
            throw e;
        }
    }

    /** E2B's connect: resumes a paused sandbox (201) or answers a running one (200), with a fresh envd token. */
    Connected connect(StasisClient client, String id, JsonNode body) {
        Sandbox sandbox = client.sandboxes().get(id);
        boolean resumed = !sandbox.isRunning();
        if (resumed) sandbox = sandbox.resume();
        if (body.path("timeout").isNumber()) setTimeout(client, sandbox, body.path("timeout").asInt());
        return new Connected(view(sandbox.info(), envdToken(client, sandbox.id())), resumed);
    }

    record Connected(E2bSandbox sandbox, boolean resumed) {
    }

    E2bSandboxDetail get(StasisClient client, String id) {
        return detail(client.sandboxes().get(id).info());
    }

    /** One page of the tenant's sandboxes, with E2B's filters: {@code state} (running, paused) and {@code metadata} ({@code k=v&...}). */
    Page list(StasisClient client, Set<String> states, Map<String, String> metadata, Integer limit, String nextToken) {
        var request = ListSandboxesRequest.builder();
        metadata.forEach(request::metadata);
        if (limit != null) request.limit(limit);
        if (nextToken != null) request.cursor(nextToken);
        var page = client.sandboxes().list(request.build());
        var items = new ArrayList<E2bSandboxDetail>();
        for (Sandbox sandbox : page.items()) {
            var detail = detail(sandbox.info());
            if (states.isEmpty() || states.contains(detail.state())) items.add(detail);
        }
        return new Page(items, page.nextCursor());
    }

    record Page(List<E2bSandboxDetail> items, String nextToken) {
    }

    /** Deletes the sandbox; false if there is none of that id. */
    boolean kill(StasisClient client, String id) {
        try {
            client.sandboxes().delete(id);
            return true;
        } catch (NotFoundException e) {
            return false;
        }
    }

    /** The sandbox is deleted {@code seconds} from now: its maxAge becomes its age then. */
    void setTimeout(StasisClient client, String id, int seconds) {
        setTimeout(client, client.sandboxes().get(id), seconds);
    }

    private static void setTimeout(StasisClient client, Sandbox sandbox, int seconds) {
        if (seconds < 0) throw new E2bException(400, "timeout must not be negative");
        Duration age = Duration.between(sandbox.createdAt(), Instant.now()).plusSeconds(seconds).truncatedTo(ChronoUnit.MILLIS);
        client.sandboxes().updateLifecycle(sandbox.id(), LifecycleUpdate.builder().maxAge(age).build());
    }

    /** Pauses the sandbox: Stasis's standby (processes and memory kept, no CPU). False if it was not running. */
    boolean pause(StasisClient client, String id) {
        Sandbox sandbox = client.sandboxes().get(id);
        if (!sandbox.isRunning() && !sandbox.isPaused()) return false;
        sandbox.standby();
        return true;
    }

    private static String envdToken(StasisClient client, String sandbox) {
        return client.tokens().issue(TokenRequest.forSandbox(sandbox, ENVD_PERMISSIONS).withTtl(ENVD_TOKEN_TTL).withName("e2b-envd")).token();
    }

    private static E2bSandbox view(SandboxInfo info, String envdToken) {
        return new E2bSandbox(info.id(), info.template(), CLIENT_ID, ENVD_VERSION, envdToken, null, info.name());
    }

    static E2bSandboxDetail detail(SandboxInfo info) {
        var resources = info.resources();
        Instant endAt = info.lifecycle() != null && info.lifecycle().maxAge() != null ? info.createdAt().plus(info.lifecycle().maxAge()) : null;
        return new E2bSandboxDetail(info.id(), info.template(), CLIENT_ID, info.name(), info.createdAt().toString(),
                endAt == null ? null : endAt.toString(), "running".equals(info.state()) ? "running" : "paused",
                resources == null || resources.cpus() == null ? 1 : resources.cpus(),
                resources == null || resources.memoryMb() == null ? 0 : resources.memoryMb(),
                resources == null || resources.diskMb() == null ? 0 : resources.diskMb(), ENVD_VERSION, info.metadata(), null);
    }

    private static String text(JsonNode body, String field, String fallback) {
        var node = body.path(field);
        if (node.isMissingNode() || node.isNull()) return fallback;
        if (!node.isTextual()) throw new E2bException(400, field + " must be a string");
        return node.asText();
    }

    private static Map<String, String> strings(JsonNode node, String field) {
        var map = new LinkedHashMap<String, String>();
        if (node.isMissingNode() || node.isNull()) return map;
        if (!node.isObject()) throw new E2bException(400, field + " must be an object of strings");
        for (var entry : node.properties()) {
            if (!entry.getValue().isTextual()) throw new E2bException(400, field + "." + entry.getKey() + " must be a string");
            map.put(entry.getKey(), entry.getValue().asText());
        }
        return map;
    }
}
