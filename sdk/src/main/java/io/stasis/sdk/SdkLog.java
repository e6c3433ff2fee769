package io.stasis.sdk;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Debug logging through slf4j when the application has it on its class path, nothing otherwise:
 * slf4j-api is an optional dependency of the SDK, so no slf4j class may be touched without it.
 */
final class SdkLog {
    private static final boolean SLF4J = present();

    private SdkLog() {
    }

    static void call(String method, String path, int status, long millis, String requestId) {
        if (SLF4J) Slf4j.call(method, path, status, millis, requestId);
    }

    static void retry(String method, String path, int attempt, long pauseMillis, String why) {
        if (SLF4J) Slf4j.retry(method, path, attempt, pauseMillis, why);
    }

    private static boolean present() {
        try {
            Class.forName("org.slf4j.LoggerFactory", false, SdkLog.class.getClassLoader());
            return true;
        } catch (ClassNotFoundException | LinkageError e) {
            return false;
        }
    }

    /** Loaded only when slf4j is present. */
    private static final class Slf4j {
        private static final Logger LOG = LoggerFactory.getLogger(StasisClient.class);

        static void call(String method, String path, int status, long millis, String requestId) {
            LOG.atDebug().addKeyValue("method", method).addKeyValue("path", path).addKeyValue("status", status)
                    .addKeyValue("ms", millis).addKeyValue("requestId", requestId).log("stasis call");
        }

        static void retry(String method, String path, int attempt, long pauseMillis, String why) {
            LOG.atDebug().addKeyValue("method", method).addKeyValue("path", path).addKeyValue("attempt", attempt)
                    .addKeyValue("pauseMs", pauseMillis).log("stasis call failed, retrying: {}", why);
        }
    }
}
