package io.stasis.sdk;

import java.util.List;
import java.util.Objects;

/**
 * The background processes of one sandbox, from {@link Sandbox#processes()}. A process is
 * addressed by its pid as the sandbox sees it (the newest with that pid).
 *
 * <pre>{@code
 * Processes processes = sandbox.processes();
 * BackgroundProcess build = processes.start(ProcessRequest.builder("make", "-j8").tag("build").build());
 * build.follow(ExecOutputListener.writingTo(System.out, System.err));   // returns when it exits
 * for (BackgroundProcess p : processes.list()) System.out.println(p.pid() + " " + p.info().status());
 * }</pre>
 */
public final class Processes {
    private final SandboxCalls calls;

    Processes(SandboxCalls calls) {
        this.calls = calls;
    }

    /** Starts a command in the background: {@code processes.start("npm", "run", "dev")}. */
    public BackgroundProcess start(String... cmd) {
        return start(ProcessRequest.of(cmd));
    }

    /**
     * Starts a process in the background and returns at once.
     *
     * @throws InvalidRequestException {@code invalid_request} (a bad cwd, an unknown program is
     *                                 exit code 127 instead)
     */
    public BackgroundProcess start(ProcessRequest request) {
        Objects.requireNonNull(request, "request");
        var transport = calls.transport();
        var call = transport.jsonCall("POST", calls.path("/processes"), request.toBody());
        return new BackgroundProcess(calls, transport.json(call, ProcessInfo.class));
    }

    /** The running processes and the last 100 ended ones, oldest first. */
    public List<BackgroundProcess> list() {
        var transport = calls.transport();
        Page.Body<ProcessInfo> body = transport.page(transport.call("GET", calls.path("/processes")), ProcessInfo.class);
        if (body.items() == null) return List.of();
        return body.items().stream().map(info -> new BackgroundProcess(calls, info)).toList();
    }

    /** @throws NotFoundException {@code process_not_found} */
    public BackgroundProcess get(long pid) {
        return new BackgroundProcess(calls, BackgroundProcess.fetch(calls, pid));
    }
}
