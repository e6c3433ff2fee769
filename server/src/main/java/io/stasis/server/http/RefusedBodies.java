package io.stasis.server.http;

import io.javalin.http.Context;
import jakarta.servlet.DispatcherType;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpFilter;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.util.EnumSet;
import org.eclipse.jetty.ee10.servlet.FilterHolder;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;

/**
 * What is left of a refused request's body. An answer written before the body was read (a 401, a
 * 404 from the access guard, a refused upload) leaves the client still sending; if the server then
 * closes with unread bytes, the kernel resets the connection and the client loses the answer
 * ("header parser received no bytes"). Jetty also closes a connection whose request body is unread
 * once the answer is sent, and an answer already sent cannot say so: a client that reuses the
 * connection (the JDK's HttpClient does) finds it gone. Reading the rest first keeps both.
 */
public final class RefusedBodies {
    private RefusedBodies() {
    }

    /** Reads and drops up to {@code limit} bytes of the body still unread; past that the connection goes anyway. */
    public static void drain(Context ctx, long limit) {
        drain(ctx.req(), limit);
    }

    /** {@link #drain(Context, long)} for a servlet's request. */
    public static void drain(HttpServletRequest request, long limit) {
        String method = request.getMethod();
        if (method.equals("GET") || method.equals("HEAD") || request.getContentLengthLong() == 0) return;
        try {
            var in = request.getInputStream();
            if (in.isFinished()) return;
            byte[] buffer = new byte[64 << 10];
            long left = limit;
            int n;
            while (left > 0 && (n = in.read(buffer, 0, (int) Math.min(buffer.length, left))) > 0) left -= n;
        } catch (IOException | RuntimeException e) {
            // the client went, or the body was taken as a reader: the connection is going anyway
        }
    }

    /**
     * Drains, after they answer, what the servlets mounted beside the API at {@code paths} (the MCP
     * and E2B endpoints, with refusals of their own) left unread. An answer still streaming (an
     * asynchronous request) has read its request already.
     */
    static void drainAfter(ServletContextHandler context, long limit, String... paths) {
        var holder = new FilterHolder(new HttpFilter() {
            @Override
            protected void doFilter(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
                    throws IOException, ServletException {
                chain.doFilter(request, response);
                if (!request.isAsyncStarted()) drain(request, limit);
            }
        });
        holder.setAsyncSupported(true);
        for (String path : paths) context.addFilter(holder, path, EnumSet.of(DispatcherType.REQUEST));
    }
}
