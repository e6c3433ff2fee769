package io.stasis.e2b;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.databind.JsonNode;
import io.stasis.e2b.E2bErrors.E2bException;
import io.stasis.sdk.ConflictException;
import io.stasis.sdk.CreateSandboxRequest;
import io.stasis.sdk.ExecRequest;
import io.stasis.sdk.ForkRequest;
import io.stasis.sdk.LifecycleUpdate;
import io.stasis.sdk.ListSandboxesRequest;
import io.stasis.sdk.NotFoundException;
import io.stasis.sdk.Sandbox;
import io.stasis.sdk.SandboxInfo;
import io.stasis.sdk.StasisApiException;
import io.stasis.sdk.StasisClient;
import io.stasis.sdk.TokenRequest;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;

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
                      String trafficAccessToken, String alias) {
    }

    /** E2B's {@code SandboxDetail} and {@code ListedSandbox}. */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    record E2bSandboxDetail(String sandboxID, String templateID, String clientID, String alias, String startedAt, String endAt,
                            String state, double cpuCount, int memoryMB, int diskSizeMB, String envdVersion, Map<String, String> metadata,
                            String domain, E2bLifecycle lifecycle) {
    }

    /** E2B's {@code SandboxLifecycle}: whether calls wake it, and what its timeout does ({@code kill}, {@code pause}). */
    record E2bLifecycle(boolean autoResume, String onTimeout) {
    }

    /**
     * Creates a sandbox from E2B's {@code NewSandbox}; answers its {@code Sandbox}. A {@code templateID}
     * that names a snapshot (a checkpoint's id or name) restores it, with its processes and memory.
     */
    E2bSandbox create(StasisClient client, JsonNode body) {
        String template = text(body, "templateID", DEFAULT_TEMPLATE);
        int timeout = body.path("timeout").isNumber() ? body.path("timeout").asInt() : DEFAULT_TIMEOUT_SECONDS;
        if (timeout < 0) throw new E2bException(400, "timeout must not be negative");
        for (String unsupported : List.of("mcp", "iam"))
            if (!body.path(unsupported).isEmpty()) // absent, null and {} alike
                throw new E2bException(400, unsupported + " is not supported by Stasis yet (see docs/E2B.md)");
        Optional<String> snapshot = template.startsWith("ckpt_") ? Optional.of(template) : Optional.empty();
        Sandbox sandbox = null;
        if (snapshot.isEmpty()) {
            try {
                sandbox = client.sandboxes().create(fromTemplate(template, body, timeout));
            } catch (StasisApiException noTemplate) {
                // Not a template: perhaps the name of a snapshot (E2B creates from either).
                if (!noTemplate.code().equals("template_not_found")) throw noTemplate;
                snapshot = Optional.of(E2bSnapshots.named(client, template).orElseThrow(() -> noTemplate));
            }
        }
        if (snapshot.isPresent()) {
            if (!volumeMounts(body).isEmpty())
                throw new E2bException(400, "volumeMounts: a sandbox made from a snapshot mounts what the snapshotted sandbox mounted");
            sandbox = client.sandboxes().create(CreateSandboxRequest.fromCheckpoint(snapshot.get(), null));
        }
        try {
            if (snapshot.isEmpty()) ensureDefaultUser(sandbox); // a snapshot's sandbox has it already
            else if (timeout > 0) // a restore takes no lifecycle: set after
                client.sandboxes().updateLifecycle(sandbox.id(), atTimeout(body, timeout).maxAge(ageIn(sandbox, timeout)).build());
            boolean publicTraffic = body.path("network").path("allowPublicTraffic").asBoolean(true);
            return view(sandbox.info(), envdToken(client, sandbox.id()), E2bPorts.expose(client, sandbox.id(), publicTraffic));
        } catch (RuntimeException e) {
            try {
                sandbox.delete();
            } catch (RuntimeException deleteFailure) {
                e.addSuppressed(deleteFailure);
            }
            throw e;
        }
    }

    /** The create of a sandbox of {@code template} with E2B's settings; {@code timeout} 0: it never times out. */
    private static CreateSandboxRequest fromTemplate(String template, JsonNode body, int timeout) {
        var request = CreateSandboxRequest.builder().template(template).env(strings(body.path("envVars"), "envVars"))
                .metadata(strings(body.path("metadata"), "metadata"));
        volumeMounts(body).forEach(mount -> request.volume(mount.name(), mount.path()));
        var lifecycle = timeout > 0 ? atTimeout(body, timeout).maxAge(Duration.ofSeconds(timeout)) : LifecycleUpdate.builder();
        // E2B's autoResume: whether a call to a paused sandbox wakes it (Stasis's own setting of that name).
        if (body.path("autoResume").has("enabled")) lifecycle.autoResume(body.path("autoResume").path("enabled").asBoolean());
        request.lifecycle(lifecycle.build());
        E2bNetwork.of(body).ifPresent(request::network);
        return request.build();
    }

    /** One of E2B's {@code volumeMounts}: a Stasis volume of the caller's (by name) at {@code path}. */
    record VolumeMount(String name, String path) {
    }

    private static List<VolumeMount> volumeMounts(JsonNode body) {
        var node = body.path("volumeMounts");
        if (node.isMissingNode() || node.isNull()) return List.of();
        if (!node.isArray()) throw new E2bException(400, "volumeMounts must be a list of {name, path}");
        var mounts = new ArrayList<VolumeMount>();
        for (var mount : node) {
            if (!mount.path("name").isTextual() || !mount.path("path").isTextual())
                throw new E2bException(400, "each of volumeMounts has a name (a volume's) and a path (where it is mounted)");
            mounts.add(new VolumeMount(mount.path("name").asText(), mount.path("path").asText()));
        }
        return mounts;
    }

    /**
     * What E2B's timeout does, as Stasis's age limit: kill (delete), or with {@code autoPause} pause:
     * standby, memory kept (a stop with {@code autoPauseMemory: false}, E2B's filesystem-only pause).
     * A sandbox woken from that pause gets the same timeout again, as in E2B.
     */
    private static LifecycleUpdate.Builder atTimeout(JsonNode body, int timeout) {
        var lifecycle = LifecycleUpdate.builder();
        if (!body.path("autoPause").asBoolean(false)) return lifecycle.atMaxAge("delete").wakeFor(null);
        return lifecycle.atMaxAge(body.path("autoPauseMemory").asBoolean(true) ? "standby" : "stop").wakeFor(Duration.ofSeconds(timeout));
    }

    /** E2B's connect: resumes the sandbox if it is not running (Stasis answers a running one unchanged), with a fresh envd token. */
    E2bSandbox connect(StasisClient client, String id, JsonNode body) {
        Sandbox sandbox = client.sandboxes().resume(id);
        if (body.path("timeout").isNumber()) setTimeout(client, sandbox, body.path("timeout").asInt());
        return view(sandbox.info(), envdToken(client, sandbox.id()), E2bPorts.of(client, sandbox.id()));
    }

    /** E2B's fork: {@code count} copies of the running sandbox, memory and processes included, each with its timeout and envd token. */
    List<Map<String, Object>> fork(StasisClient client, String id, JsonNode body) {
        int count = body.path("count").asInt(1);
        if (count < 1 || count > 100) throw new E2bException(400, "count must be between 1 and 100");
        int timeout = body.path("timeout").isNumber() ? body.path("timeout").asInt() : DEFAULT_TIMEOUT_SECONDS;
        var results = new ArrayList<Map<String, Object>>();
        for (Sandbox fork : client.sandboxes().fork(id, ForkRequest.builder().count(count).build())) {
            try {
                if (timeout > 0) setTimeout(client, fork, timeout);
                results.add(Map.of("sandbox", view(fork.info(), envdToken(client, fork.id()), E2bPorts.expose(client, fork.id(), true))));
            } catch (StasisApiException e) {
                results.add(Map.of("error", Map.of("code", E2bErrors.statusOf(e), "message", E2bErrors.messageOf(e))));
            }
        }
        return results;
    }

    /**
     * E2B's metrics: one reading of now (E2B answers the samples it took over a period; Stasis reads
     * on demand). CPU share since the previous reading, memory in RAM against the limit, the disk
     * limit; the disk's use is not measured.
     */
    List<Map<String, Object>> metrics(StasisClient client, String id) {
        return List.of(E2bMetric.of(client, client.sandboxes().get(id).info()).controlPlane());
    }

    /** The latest metric of each of {@code ids} that is one of the caller's running sandboxes (E2B's {@code SandboxesWithMetrics}). */
    Map<String, Map<String, Object>> metricsOf(StasisClient client, Set<String> ids) {
        var found = new TreeMap<String, Map<String, Object>>();
        for (String id : ids) {
            try {
                var sandbox = client.sandboxes().get(id).info();
                if (sandbox.state().equals("running")) found.put(id, E2bMetric.of(client, sandbox).controlPlane());
            } catch (NotFoundException gone) {
                // not the caller's, or gone: E2B leaves it out
            }
        }
        return found;
    }

    /** E2B's network update: the whole egress policy, replaced. */
    void updateNetwork(StasisClient client, String id, JsonNode body) {
        client.sandboxes().updateNetwork(id, E2bNetwork.update(body));
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
        client.sandboxes().updateLifecycle(sandbox.id(), LifecycleUpdate.builder().maxAge(ageIn(sandbox, seconds)).build());
    }

    /** The sandbox's age {@code seconds} from now. */
    private static Duration ageIn(Sandbox sandbox, int seconds) {
        return Duration.between(sandbox.createdAt(), Instant.now()).plusSeconds(seconds).truncatedTo(ChronoUnit.MILLIS);
    }

    /** Pauses the sandbox: Stasis's standby (processes and memory kept, no CPU). False if it cannot be (hibernated, stopped). */
    boolean pause(StasisClient client, String id) {
        try {
            client.sandboxes().standby(id);
            return true;
        } catch (ConflictException notRunning) {
            return false;
        }
    }

    /** Makes E2B's default user unless the sandbox's template has it (one file read when it does). */
    private static void ensureDefaultUser(Sandbox sandbox) {
        String passwd = new String(sandbox.files().read("/etc/passwd"), StandardCharsets.UTF_8);
        if (passwd.lines().anyMatch(line -> line.startsWith(EnvdCall.DEFAULT_USER + ":"))) return;
        sandbox.exec(ExecRequest.builder("sh", "-c", ADD_DEFAULT_USER).user("root").timeout(Duration.ofSeconds(30)).build());
    }

    private static String envdToken(StasisClient client, String sandbox) {
        return client.tokens().issue(TokenRequest.forSandbox(sandbox, ENVD_PERMISSIONS).withTtl(ENVD_TOKEN_TTL).withName("e2b-envd")).token();
    }

    private static E2bSandbox view(SandboxInfo info, String envdToken, E2bPorts ports) {
        return new E2bSandbox(info.id(), info.template(), CLIENT_ID, ENVD_VERSION, envdToken, ports.domain(), ports.trafficToken(), info.name());
    }

    static E2bSandboxDetail detail(SandboxInfo info) {
        var resources = info.resources();
        Instant endAt = info.lifecycle() != null && info.lifecycle().maxAge() != null ? info.createdAt().plus(info.lifecycle().maxAge()) : null;
        return new E2bSandboxDetail(info.id(), info.template(), CLIENT_ID, info.name(), info.createdAt().toString(),
                endAt == null ? null : endAt.toString(), "running".equals(info.state()) ? "running" : "paused",
                resources == null || resources.cpus() == null ? 1 : resources.cpus(),
                resources == null || resources.memoryMb() == null ? 0 : resources.memoryMb(),
                resources == null || resources.diskMb() == null ? 0 : resources.diskMb(), ENVD_VERSION, info.metadata(), null, lifecycle(info));
    }

    private static E2bLifecycle lifecycle(SandboxInfo info) {
        var policy = info.lifecycle();
        if (policy == null) return null;
        boolean pauses = policy.atMaxAge() != null && !policy.atMaxAge().equals("delete");
        return new E2bLifecycle(policy.autoResume(), pauses ? "pause" : "kill");
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
