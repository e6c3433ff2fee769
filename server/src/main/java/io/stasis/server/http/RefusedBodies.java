package io.stasis.server.http;

import io.javalin.http.Context;
import java.io.IOException;

/**
 * What is left of a refused request's body. An answer written before the body was read (a 401, a
 * 404 from the access guard, a refused upload) leaves the client still sending; if the server then
 * closes with unread bytes, the kernel resets the connection and the client loses the answer
 * ("header parser received no bytes"). Reading the rest first lets the answer arrive.
 */
public final class RefusedBodies {
    private RefusedBodies() {
    }

    /** Reads and drops up to {@code limit} bytes of the body still unread; past that the connection goes anyway. */
    public static void drain(Context ctx, long limit) {
        String method = ctx.method().name();
        if (method.equals("GET") || method.equals("HEAD") || ctx.req().getContentLengthLong() == 0) return;
        try {
            var in = ctx.req().getInputStream();
            if (in.isFinished()) return;
            byte[] buffer = new byte[64 << 10];
            long left = limit;
            int n;
            while (left > 0 && (n = in.read(buffer, 0, (int) Math.min(buffer.length, left))) > 0) left -= n;
        } catch (IOException | RuntimeException e) {
            // the client went, or the body was taken as a reader: the connection is going anyway
        }
    }
}
