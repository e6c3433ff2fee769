package io.stasis.server.e2b;

import io.stasis.e2b.E2bServlet;
import jakarta.servlet.MultipartConfigElement;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.function.Supplier;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.eclipse.jetty.ee10.servlet.ServletHolder;

/**
 * The E2B protocol at {@value E2bServlet#PATH}, beside the REST API on its Jetty: E2B's REST API
 * and envd, translated into calls of this service's API with the caller's credential (see
 * {@link E2bServlet}), so its SDKs work against Stasis unchanged.
 */
public final class E2bEndpoint {
    /** Where the endpoint answers: everything under {@value E2bServlet#PATH}. */
    public static final String MAPPING = E2bServlet.PATH + "/*";

    private final E2bServlet servlet;
    private final Path uploads;
    private final long maxUploadBytes;

    /**
     * @param apiUrl         where this service's API answers, once it listens
     * @param uploads        a host directory for multipart uploads in progress
     * @param maxUploadBytes the largest file an upload may send
     */
    public E2bEndpoint(Supplier<String> apiUrl, Path uploads, long maxUploadBytes) {
        this.servlet = new E2bServlet(apiUrl);
        this.uploads = uploads;
        try {
            Files.createDirectories(uploads);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot make the E2B uploads directory " + uploads, e);
        }
        this.maxUploadBytes = maxUploadBytes;
    }

    /** Adds the endpoint to the API's servlet context (before the server starts). */
    public void mount(ServletContextHandler context) {
        var holder = new ServletHolder("e2b", servlet);
        holder.setAsyncSupported(true);
        // Parts over 1 MiB wait in the uploads directory, not in the heap.
        holder.getRegistration().setMultipartConfig(new MultipartConfigElement(uploads.toString(), maxUploadBytes, maxUploadBytes + (1 << 20), 1 << 20));
        context.addServlet(holder, MAPPING);
    }
}
