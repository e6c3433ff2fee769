package io.stasis.sdk;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Consumer;

/**
 * The templates sandboxes are created from, from {@link StasisClient#templates()}: the service's
 * own and those the tenant builds (from steps or a Dockerfile). A built template is the tenant's
 * alone; each successful build installs a new version of it, and sandboxes made from an earlier
 * version keep theirs.
 *
 * <pre>{@code
 * for (TemplateInfo t : client.templates().list()) {
 *     System.out.println(t.name() + " " + t.status());
 * }
 *
 * client.templates().build(TemplateBuildRequest.builder("app").from("base").run("apt-get install -y make").build());
 * client.templates().followLogs("app", 0, log -> System.err.print(log.output()));
 * TemplateInfo app = client.templates().awaitBuild("app", Duration.ofMinutes(30)); // throws TemplateBuildException if it failed
 * client.sandboxes().create(CreateSandboxRequest.builder().template("app").build());
 * }</pre>
 */
public final class Templates {
    /** How long the server holds a {@code follow=true} read open when there is nothing new. */
    private static final Duration FOLLOW_WAIT = Duration.ofSeconds(10);
    /** {@link #awaitBuild} asks again after this, doubling up to {@link #LONGEST_POLL}. */
    private static final Duration FIRST_POLL = Duration.ofMillis(250);
    private static final Duration LONGEST_POLL = Duration.ofSeconds(2);

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

    /** The kept versions of a template, newest first ({@code app@3}, {@code app@2}, ...). */
    public List<TemplateVersion> versions(String name) {
        return transport.page(transport.call("GET", path(name) + "/versions"), TemplateVersion.class).items();
    }

    private Page<TemplateInfo> page(String cursor) {
        Page.Body<TemplateInfo> body = transport.page(
                transport.call("GET", "/v1/templates").query(Query.of().add("cursor", cursor)), TemplateInfo.class);
        return new Page<>(body.items(), body.nextCursor(), this::page);
    }

    /** @throws NotFoundException {@code not_found}: no template of this name that the caller sees */
    public TemplateInfo get(String name) {
        return transport.json(transport.call("GET", path(name)), TemplateInfo.class);
    }

    /**
     * Starts a build and returns the template at once, {@code building}; follow it with
     * {@link #followLogs} and {@link #awaitBuild}. The request (with its context) is sent once.
     *
     * @throws InvalidRequestException {@code invalid_request} (a bad name, step or Dockerfile line, a
     *                                 context over 32 MiB), {@code template_not_found} (an unknown {@code from})
     * @throws ConflictException       {@code name_taken} (a service template's or another tenant's name),
     *                                 {@code invalid_state} (a build of it is already running)
     */
    public TemplateInfo build(TemplateBuildRequest request) {
        Objects.requireNonNull(request, "request");
        // Up to 43 MiB of JSON to send and decode: more than an ordinary call's wait.
        var call = transport.jsonCall("POST", "/v1/templates", request.toBody()).timeout(transport.operationTimeout());
        return transport.json(call, TemplateInfo.class);
    }

    /**
     * Imports a container image archive (an OCI image layout or a {@code docker save} archive; plain,
     * gzip or zstd), streamed from {@code archive}: the server checks it before answering and applies
     * its layers in the background; follow it as a build ({@link #awaitBuild}).
     *
     * @throws InvalidRequestException a bad name, a broken archive, a blob that is not what its digest says
     */
    public TemplateInfo importArchive(String name, Path archive) {
        Objects.requireNonNull(name, "name");
        java.net.http.HttpRequest.BodyPublisher body;
        try {
            body = java.net.http.HttpRequest.BodyPublishers.ofFile(archive);
        } catch (java.io.FileNotFoundException e) {
            throw new java.io.UncheckedIOException("cannot read " + archive + ": no such file", e);
        }
        // No timeout: the answer comes once the whole archive is read and checked.
        var call = HttpTransport.Call.of("POST", "/v1/templates/import").query(Query.of().add("name", name))
                .body(body, "application/octet-stream");
        return transport.json(call, TemplateInfo.class);
    }

    /**
     * Imports {@code oci://REGISTRY/REPO[:TAG][@sha256:...]} from its registry, in the background;
     * follow it as a build ({@link #awaitBuild}).
     */
    public TemplateInfo importImage(String name, String reference) {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(reference, "reference");
        return transport.json(transport.jsonCall("POST", "/v1/templates", Map.of("name", name, "from", reference)), TemplateInfo.class);
    }

    /**
     * The build's output from {@code offset} (at most 64 KiB), as it is now.
     *
     * @throws NotFoundException       no such template
     * @throws InvalidRequestException it has had no build since the service started
     */
    public TemplateLog logs(String name, long offset) {
        if (offset < 0) throw new IllegalArgumentException("offset must not be negative, was " + offset);
        return transport.json(transport.call("GET", path(name) + "/logs").query(Query.of().add("offset", offset)), TemplateLog.class);
    }

    /**
     * Hands {@code consumer} the build's output from {@code offset} as it comes, on this thread, and
     * returns the offset after its last byte once the build has ended. Each piece that has text (or
     * starts past where the last ended: {@link TemplateLog#droppedAfter}) is handed over once; a
     * read the server holds open finds nothing new after 10 s and is simply asked again.
     * What the consumer throws ends the following and is rethrown here.
     *
     * @throws NotFoundException       no such template
     * @throws InvalidRequestException it has had no build since the service started
     */
    public long followLogs(String name, long offset, Consumer<TemplateLog> consumer) {
        if (offset < 0) throw new IllegalArgumentException("offset must not be negative, was " + offset);
        Objects.requireNonNull(consumer, "consumer");
        Duration slack = transport.requestTimeout();
        long at = offset;
        while (true) {
            var call = transport.call("GET", path(name) + "/logs").query(Query.of().add("offset", at).add("follow", true))
                    .timeout(slack == null ? null : FOLLOW_WAIT.plus(slack));
            TemplateLog log = transport.json(call, TemplateLog.class);
            if (!log.output().isEmpty() || log.start() > at) consumer.accept(log);
            at = Math.max(at, log.next());
            if (log.done()) return at;
        }
    }

    /** {@link #awaitBuild(String, Duration, Consumer)} without a look at each poll. */
    public TemplateInfo awaitBuild(String name, Duration timeout) {
        return awaitBuild(name, timeout, info -> { });
    }

    /**
     * Waits until the template is no longer {@code building}, at most {@code timeout} (null: as
     * long as it takes), and returns it as it then is: still {@linkplain TemplateInfo#isBuilding()
     * building} when the time ran out (the build goes on), else ready. {@code onPoll} sees the
     * template each time it is found still building (for a progress line). Polls every 250 ms at
     * first, then less often, up to every 2 s.
     *
     * @throws TemplateBuildException the build failed (also when an earlier version is still installed)
     * @throws NotFoundException      no such template
     */
    public TemplateInfo awaitBuild(String name, Duration timeout, Consumer<TemplateInfo> onPoll) {
        if (timeout != null && timeout.isNegative()) throw new IllegalArgumentException("timeout is negative: " + timeout);
        Objects.requireNonNull(onPoll, "onPoll");
        long deadline = timeout == null ? 0 : System.nanoTime() + timeout.toNanos();
        Duration pause = FIRST_POLL;
        while (true) {
            TemplateInfo info = get(name);
            if (info.isFailed()) throw new TemplateBuildException(info);
            if (!info.isBuilding()) return info;
            onPoll.accept(info);
            if (timeout != null) {
                Duration left = Duration.ofNanos(deadline - System.nanoTime());
                if (left.isNegative() || left.isZero()) return info;
                if (left.compareTo(pause) < 0) pause = left;
            }
            try {
                Thread.sleep(pause);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new StasisClientException("interrupted while waiting for the build of template " + name, e);
            }
            pause = pause.multipliedBy(2).compareTo(LONGEST_POLL) > 0 ? LONGEST_POLL : pause.multipliedBy(2);
        }
    }

    /**
     * Deletes a template the tenant built, with its cached steps; sandboxes must not use it.
     *
     * @throws NotFoundException {@code not_found}
     * @throws ConflictException {@code template_in_use} while sandboxes made from it exist (the
     *                           message names them), {@code invalid_state} for the service's own
     *                           templates and while it is building
     */
    public void delete(String name) {
        transport.discard(transport.call("DELETE", path(name)));
    }

    private static String path(String name) {
        return "/v1/templates/" + Query.encode(Objects.requireNonNull(name, "name"));
    }
}
