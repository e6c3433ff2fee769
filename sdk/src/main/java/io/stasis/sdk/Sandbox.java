package io.stasis.sdk;

import com.fasterxml.jackson.annotation.JsonValue;
import java.time.Instant;
import java.util.Map;

/**
 * A sandbox as last fetched from the server, with methods that act on it. The data is a
 * snapshot ({@link #refresh()} fetches a new one); the methods address the sandbox by id.
 *
 * <pre>{@code
 * Sandbox sandbox = client.sandboxes().create(CreateSandboxRequest.builder().template("tiny").build());
 * ExecResult r = sandbox.exec("echo", "hello");
 * sandbox.files().write("/root/a.txt", "data");
 * sandbox.delete();
 * }</pre>
 */
public final class Sandbox {
    private final SandboxInfo info;
    private final SandboxCalls calls;

    Sandbox(SandboxInfo info, HttpTransport transport) {
        this.info = info;
        this.calls = new SandboxCalls(transport, info.id());
    }

    /** The wire data. */
    @JsonValue
    public SandboxInfo info() {
        return info;
    }

    public String id() {
        return info.id();
    }

    /** The name, or null. */
    public String name() {
        return info.name();
    }

    public String template() {
        return info.template();
    }

    /** {@code running} or {@code stopped} when fetched. */
    public String state() {
        return info.state();
    }

    /** Why it stopped, or null. */
    public String stateReason() {
        return info.stateReason();
    }

    public boolean isRunning() {
        return "running".equals(info.state());
    }

    public Instant createdAt() {
        return info.createdAt();
    }

    public Resources resources() {
        return info.resources();
    }

    public Map<String, String> env() {
        return info.env();
    }

    public Map<String, String> metadata() {
        return info.metadata();
    }

    /** Runs a command and waits for it: {@code sandbox.exec("sh", "-c", "ls | wc -l")}. */
    public ExecResult exec(String... cmd) {
        return calls.exec(ExecRequest.of(cmd));
    }

    /** Runs a command and waits for it. */
    public ExecResult exec(ExecRequest request) {
        return calls.exec(request);
    }

    /**
     * Runs a command, handing its output to {@code listener} as it arrives (Server-Sent Events),
     * and returns the result at the end (its output kept up to 16 MiB per stream).
     */
    public ExecResult execStream(ExecRequest request, ExecOutputListener listener) {
        return calls.execStream(request, listener);
    }

    /** The sandbox's files. */
    public SandboxFiles files() {
        return new SandboxFiles(calls);
    }

    /** Fetches the current data. */
    public Sandbox refresh() {
        return new Sandbox(calls.get(), calls.transport());
    }

    /** Deletes the sandbox: every process ends, its root filesystem is removed. */
    public void delete() {
        calls.delete();
    }

    @Override
    public String toString() {
        return "Sandbox[" + info.id() + (info.name() == null ? "" : " " + info.name()) + ", " + info.state() + "]";
    }
}
