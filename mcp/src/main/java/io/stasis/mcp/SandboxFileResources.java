package io.stasis.mcp;

import io.modelcontextprotocol.server.McpServerFeatures.SyncResourceTemplateSpecification;
import io.modelcontextprotocol.spec.McpError;
import io.modelcontextprotocol.spec.McpSchema;
import io.modelcontextprotocol.spec.McpSchema.BlobResourceContents;
import io.modelcontextprotocol.spec.McpSchema.ReadResourceResult;
import io.modelcontextprotocol.spec.McpSchema.ResourceTemplate;
import io.modelcontextprotocol.spec.McpSchema.TextResourceContents;
import io.stasis.sdk.StasisApiException;
import io.stasis.sdk.StasisClient;
import java.net.URLConnection;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;
import java.util.Map;

/**
 * The files of sandboxes as MCP resources: {@code stasis://sandboxes/{id}/files/{+path}}, e.g.
 * {@code stasis://sandboxes/sbx_abc/files/root/app.py} is {@code /root/app.py} of {@code sbx_abc}.
 * UTF-8 files come back as text, others as a base64 blob; at most {@value #MAX_BYTES} bytes.
 */
final class SandboxFileResources {
    static final String PREFIX = "stasis://sandboxes/";
    static final String TEMPLATE = PREFIX + "{id}/files/{+path}";
    static final int MAX_BYTES = 8 << 20;

    private SandboxFileResources() {
    }

    static SyncResourceTemplateSpecification specification(ClientSource clients) {
        var template = ResourceTemplate.builder().uriTemplate(TEMPLATE).name("sandbox-file").title("Sandbox file")
                .description("A file inside a sandbox: " + PREFIX + "<sandbox id or name>/files/<path without the "
                        + "leading slash>, e.g. " + PREFIX + "sbx_abc/files/root/app.py. At most " + MAX_BYTES + " bytes.")
                .build();
        return new SyncResourceTemplateSpecification(template,
                (exchange, request) -> read(clients.clientFor(exchange), request.uri()));
    }

    /** The sandbox and path a resource URI names. */
    record Address(String sandbox, String path) {
        static Address parse(String uri) {
            int files = uri.indexOf("/files/", PREFIX.length());
            if (!uri.startsWith(PREFIX) || files < 0 || files == PREFIX.length() || files + 7 == uri.length()) {
                throw new McpError(new McpSchema.JSONRPCResponse.JSONRPCError(McpSchema.ErrorCodes.INVALID_PARAMS,
                        "not a sandbox file URI: '" + uri + "' (expected " + PREFIX + "<sandbox>/files/<path>)", null));
            }
            String sandbox = decode(uri.substring(PREFIX.length(), files));
            String path = "/" + decode(uri.substring(files + 7));
            return new Address(sandbox, path);
        }

        private static String decode(String part) {
            return URLDecoder.decode(part.replace("+", "%2B"), StandardCharsets.UTF_8);
        }
    }

    static ReadResourceResult read(StasisClient client, String uri) {
        Address address = Address.parse(uri);
        FileTools.Part part;
        try {
            part = FileTools.readPart(client.sandboxes().files(address.sandbox()), address.path(), 0, MAX_BYTES);
        } catch (StasisApiException e) {
            int code = e.status() == 404 ? McpSchema.ErrorCodes.RESOURCE_NOT_FOUND : McpSchema.ErrorCodes.INTERNAL_ERROR;
            throw new McpError(new McpSchema.JSONRPCResponse.JSONRPCError(code, e.code() + ": " + e.errorMessage(),
                    Map.of("code", e.code(), "uri", uri)));
        }
        String text = Texts.utf8OrNull(part.bytes(), part.length());
        String guessed = URLConnection.guessContentTypeFromName(address.path());
        if (text != null) {
            return new ReadResourceResult(List.of(new TextResourceContents(uri, guessed == null ? "text/plain" : guessed, text)));
        }
        String blob = Base64.getEncoder().encodeToString(Arrays.copyOf(part.bytes(), part.length()));
        return new ReadResourceResult(List.of(new BlobResourceContents(uri,
                guessed == null ? "application/octet-stream" : guessed, blob)));
    }
}
