package io.stasis.e2b;

import io.stasis.e2b.ConnectRpc.Code;
import io.stasis.e2b.ConnectRpc.RpcException;
import io.stasis.sdk.StasisClient;
import java.nio.charset.StandardCharsets;
import java.util.Base64;

/**
 * One call to a sandbox's envd, as Stasis serves it: the API client with the caller's credential,
 * the sandbox the {@code E2b-Sandbox-Id} header names, and the user the call acts as (envd's HTTP
 * basic user name, or the {@code username} of a file call; {@value #DEFAULT_USER} when none is given).
 */
record EnvdCall(StasisClient client, String sandbox, String user) {
    static final String DEFAULT_USER = "user";

    /** The user of an {@code Authorization: Basic base64(user:)} header, or the default. */
    static String userOfBasic(String authorization) {
        if (authorization == null || !authorization.regionMatches(true, 0, "Basic ", 0, 6)) return DEFAULT_USER;
        String decoded;
        try {
            decoded = new String(Base64.getDecoder().decode(authorization.substring(6).strip()), StandardCharsets.UTF_8);
        } catch (IllegalArgumentException e) {
            throw new RpcException(Code.INVALID_ARGUMENT, "the Authorization header is not base64");
        }
        int colon = decoded.indexOf(':');
        String user = colon < 0 ? decoded : decoded.substring(0, colon);
        return user.isEmpty() ? DEFAULT_USER : user;
    }

    /** The user's home directory, where relative paths and commands start. */
    String home() {
        return user.equals("root") ? "/root" : "/home/" + user;
    }

    /** {@code path} as an absolute path in the sandbox: relative ones (and {@code ~/...}) from the user's home. */
    String resolve(String path) {
        if (path == null || path.isEmpty()) return home();
        if (path.equals("~")) return home();
        if (path.startsWith("~/")) return home() + path.substring(1);
        if (path.startsWith("/")) return path;
        return home() + "/" + path;
    }
}
