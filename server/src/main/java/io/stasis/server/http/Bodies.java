package io.stasis.server.http;

import com.fasterxml.jackson.databind.JsonNode;
import io.stasis.core.error.StasisException;
import io.stasis.core.spi.SpawnSpec;
import java.util.List;
import java.util.Map;

/** The JSON shapes the API accepts. Unknown fields are refused (see {@link Json}). */
final class Bodies {
    private Bodies() {
    }

    record CreateSandbox(String template, String name, Map<String, String> env, Map<String, String> metadata, ResourcesBody resources,
                         JsonNode lifecycle, JsonNode durability, JsonNode network,
                         List<MountBody> volumes, List<BucketMountBody> mounts, String fromCheckpoint, String runtime) {
    }

    record BucketMountBody(String type, String endpoint, String region, String bucket, String prefix, String path, Boolean readOnly,
                           String credentialsSecret) {
    }

    record MountBody(String volume, String path, Boolean readOnly) {
    }

    record BuildTemplate(String name, String from, JsonNode steps, String dockerfile, String context, List<String> cmd,
                         ResourcesBody resources, JsonNode network, String startCmd, String readyCmd, Long readyTimeoutMs) {
    }

    record CreateVolume(String name, Long sizeMb, Long sizeGb, String fromSnapshot, String fromSync) {
    }

    record CreateCheckpoint(String name, Boolean memory, Boolean durable, Integer spares) {
    }

    record Spares(Integer count) {
    }

    record Fork(String checkpoint, Integer count, String name) {
    }

    record ResourcesBody(Double cpus, Integer memoryMb, Integer pids, Integer diskMb) {
    }

    record Exec(List<String> cmd, String cwd, Map<String, String> env, String stdin, String stdinEncoding, String encoding, Long timeoutMs,
                String user) {
    }

    record Move(String from, String to, Boolean overwrite) {
    }

    record StartProcess(List<String> cmd, String cwd, Map<String, String> env, Boolean background, TerminalBody pty,
                        Boolean keepAlive, String keepAliveFor, String tag, Boolean stdin, String user) {
    }

    record TerminalBody(Integer cols, Integer rows) {
        SpawnSpec.TerminalSize size() {
            if (cols == null || rows == null) throw StasisException.invalid("pty", "needs cols and rows");
            return new SpawnSpec.TerminalSize(cols, rows);
        }
    }

    record SignalProcess(String signal) {
    }
}
