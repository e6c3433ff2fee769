package io.stasis.e2b;

import io.stasis.e2b.E2bErrors.E2bException;
import io.stasis.sdk.ExecRequest;
import io.stasis.sdk.FileInfo;
import io.stasis.sdk.FileType;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import jakarta.servlet.http.Part;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.zip.GZIPInputStream;

/**
 * envd's HTTP file routes: {@code GET /files?path=&username=} downloads a file, {@code POST /files}
 * uploads one or more (multipart, each part's file name its path, or the query's {@code path}; or
 * one file as {@code application/octet-stream}, gzip allowed) and answers the written entries.
 * Files written for a user other than root become that user's, as envd writes them as the user.
 */
final class EnvdFiles {
    void download(EnvdCall call, String path, HttpServletResponse response) throws IOException {
        String resolved = call.resolve(path);
        try (InputStream in = call.client().sandboxes().files(call.sandbox()).readStream(resolved)) {
            response.setStatus(200);
            response.setContentType("application/octet-stream");
            try (OutputStream out = response.getOutputStream()) {
                in.transferTo(out);
            }
        }
    }

    void upload(EnvdCall call, String path, HttpServletRequest request, HttpServletResponse response) throws IOException, ServletException {
        var written = new ArrayList<Map<String, Object>>();
        String type = request.getContentType() == null ? "" : request.getContentType();
        if (type.startsWith("multipart/form-data")) {
            for (Part part : request.getParts()) {
                if (!"file".equals(part.getName())) continue;
                String target = part.getSubmittedFileName() != null && !part.getSubmittedFileName().isEmpty() ? part.getSubmittedFileName() : path;
                try (InputStream in = part.getInputStream()) {
                    written.add(write(call, target, in));
                }
            }
        } else {
            if (path == null || path.isEmpty()) throw new E2bException(400, "path is required for an octet-stream upload");
            InputStream body = request.getInputStream();
            if ("gzip".equalsIgnoreCase(request.getHeader("Content-Encoding"))) body = new GZIPInputStream(body);
            try (InputStream in = body) {
                written.add(write(call, path, in));
            }
        }
        if (written.isEmpty()) throw new E2bException(400, "the request has no file");
        ConnectRpc.writeJson(response, 200, written);
    }

    private static Map<String, Object> write(EnvdCall call, String path, InputStream content) {
        if (path == null || path.isEmpty()) throw new E2bException(400, "a file has no path");
        String resolved = call.resolve(path);
        FileInfo info = call.client().sandboxes().files(call.sandbox()).write(resolved, content);
        if (!call.user().equals("root")) ownBy(call, resolved);
        var entry = new LinkedHashMap<String, Object>();
        entry.put("name", info.name());
        entry.put("type", info.type() == FileType.DIR ? "dir" : "file");
        entry.put("path", info.path());
        return entry;
    }

    /**
     * Gives the file, and the directories the write made under the user's home, to the user: one
     * command more per write, as the files API writes as the sandbox's root.
     */
    private static void ownBy(EnvdCall call, String path) {
        String home = call.home() + "/";
        List<String> argv = new ArrayList<>(List.of("chown", call.user() + ":", path));
        if (path.startsWith(home)) {
            // Parents the write may have made: each directory between the home and the file.
            String rest = path.substring(home.length());
            int slash = rest.indexOf('/');
            while (slash > 0) {
                argv.add(home + rest.substring(0, slash));
                slash = rest.indexOf('/', slash + 1);
            }
        }
        var result = call.client().sandboxes().exec(call.sandbox(),
                ExecRequest.builder(argv).user("root").timeout(Duration.ofSeconds(30)).build());
        if (result.exitCode() != 0) throw new E2bException(500, "could not give " + path + " to " + call.user() + ": " + result.stderr().strip());
    }
}
