package io.stasis.server.http;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.stasis.core.error.ErrorCode;
import io.stasis.server.error.ErrorMapper;
import io.swagger.v3.oas.models.SpecVersion;
import io.swagger.v3.parser.OpenAPIV3Parser;
import io.swagger.v3.parser.core.models.ParseOptions;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/** The hand-kept spec is valid OpenAPI 3.1, and its error codes are ErrorCode's with ErrorMapper's statuses. */
class OpenApiSpecTest {
    private static final OpenApiSpec SPEC = OpenApiSpec.load();

    @Test
    void isValidOpenApi31() {
        var options = new ParseOptions();
        options.setResolve(true);
        var result = new OpenAPIV3Parser().readContents(SPEC.yaml(), null, options);
        assertThat(result.getMessages()).as("parser messages").isEmpty();
        assertThat(result.getOpenAPI()).isNotNull();
        assertThat(result.getOpenAPI().getSpecVersion()).isEqualTo(SpecVersion.V31);
        assertThat(result.getOpenAPI().getOpenapi()).startsWith("3.1.");
    }

    @Test
    void everyReferenceResolvesAndOperationIdsAreUnique() {
        var refs = new TreeSet<String>();
        collectRefs(SPEC.root(), refs);
        assertThat(refs).allSatisfy(ref -> assertThat(SPEC.root().at(ref.substring(1)).isMissingNode()).as(ref).isFalse());
        var ids = new ArrayList<String>();
        SPEC.root().path("paths").forEach(path -> path.forEach(op -> {
            if (op.has("operationId")) ids.add(op.get("operationId").asText());
        }));
        assertThat(ids).doesNotHaveDuplicates().hasSize(SPEC.operations().size());
    }

    @Test
    void everySchemaCompilesUnderTheOpenApi31Dialect() {
        var empty = JsonNodeFactory.instance.objectNode();
        SPEC.root().path("components").path("schemas").properties().stream().map(Map.Entry::getKey).forEach(name -> SPEC.errors(name, empty)); // throws on a bad schema
    }

    @Test
    void validationIsStrictAboutFieldsTheSpecDoesNotName() throws Exception {
        var mapper = new ObjectMapper();
        var sandbox = (ObjectNode) mapper.readTree("""
                {"id": "sbx_0f3k2m9x8c7v6b5n", "name": null, "template": "tiny", "state": "hibernated", "stateReason": null,
                 "hibernation": {"checkpointId": "ckpt_1", "imageBytes": 10, "takenAt": "2026-11-29T10:00:00Z"},
                 "createdAt": "2026-11-29T10:00:00Z", "resources": {"cpus": 1.0, "memoryMb": 1024, "pids": 512, "diskMb": 10240},
                 "env": {}, "metadata": {"team": "x"}, "parentId": null, "checkpointId": null,
                 "lifecycle": {"pauseAfterIdle": "15s", "standbyAfterIdle": "2m", "hibernateAfterIdle": "10m", "stopAfterIdle": null,
                               "deleteAfterIdle": "30d", "maxAge": null, "atMaxAge": "delete", "wakeFor": null, "autoResume": true},
                 "durability": {"checkpointEvery": null},
                 "generation": 3,
                 "runtime": "runc"}
                """);
        assertThat(SPEC.errors("Sandbox", sandbox)).isEmpty();
        assertThat(SPEC.errors("Sandbox", sandbox.deepCopy().put("unnamed", 1))).as("an unknown field").isNotEmpty();
        assertThat(SPEC.errors("Sandbox", sandbox.deepCopy().<ObjectNode>without("id")))
                .as("a missing field").isNotEmpty();
        var hibernation = sandbox.deepCopy();
        ((ObjectNode) hibernation.get("hibernation")).put("extra", true);
        assertThat(SPEC.errors("Sandbox", hibernation)).as("an unknown field of a nested nullable object").isNotEmpty();
        assertThat(SPEC.errors("Sandbox", sandbox.deepCopy().put("runtime", "kata"))).as("a runtime outside the enum").isNotEmpty();
        assertThat(SPEC.errors("Sandbox", sandbox.deepCopy().put("state", "deleted"))).as("a state outside the enum").isNotEmpty();
        assertThat(SPEC.errors("Error404", mapper.readTree("""
                {"error": {"code": "invalid_request", "message": "m", "details": {}}}"""))).as("a code of another status").isNotEmpty();
        assertThat(SPEC.errors("Error404", mapper.readTree("""
                {"error": {"code": "sandbox_not_found", "message": "m", "details": {"sandbox": "x"}}}"""))).isEmpty();
    }

    @Test
    void errorCodesAreErrorCodeAndTheirStatusesErrorMapper() {
        JsonNode schemas = SPEC.root().path("components").path("schemas");
        var documented = new TreeSet<String>();
        schemas.path("ErrorCode").path("enum").forEach(code -> documented.add(code.asText()));
        var codes = new TreeSet<String>(Arrays.stream(ErrorCode.values()).map(ErrorCode::wireName).toList());
        assertThat(documented).as("components/schemas/ErrorCode").isEqualTo(codes);

        Map<String, Integer> specStatus = new TreeMap<>();
        schemas.properties().forEach(e -> {
            if (!e.getKey().matches("Error\\d{3}")) return;
            int status = Integer.parseInt(e.getKey().substring(5));
            e.getValue().path("allOf").get(1).path("properties").path("error").path("properties").path("code").path("enum")
                    .forEach(code -> assertThat(specStatus.put(code.asText(), status)).as(code + " in two Error schemas").isNull());
        });
        Map<String, Integer> serverStatus = new TreeMap<>();
        for (ErrorCode code : ErrorCode.values()) serverStatus.put(code.wireName(), ErrorMapper.status(code));
        assertThat(specStatus).as("code -> status in the spec's Error<status> schemas").isEqualTo(serverStatus);
    }

    @Test
    void errorResponsesUseTheSchemaOfTheirStatus() {
        var wrong = new ArrayList<String>();
        SPEC.root().path("paths").properties().forEach(path -> path.getValue().properties().forEach(op ->
                op.getValue().path("responses").properties().forEach(r -> {
                    int status = Integer.parseInt(r.getKey());
                    // the S3 endpoint answers S3's XML errors, the E2B endpoint E2B's and Connect's
                    if (status < 400 || isS3(path.getKey()) || isE2b(path.getKey())) return;
                    String ref = SPEC.resolve(r.getValue()).path("content").path("application/json").path("schema").path("$ref").asText();
                    if (!ref.equals("#/components/schemas/Error" + status)) wrong.add(op.getKey() + " " + path.getKey() + " " + status + ": " + ref);
                })));
        assertThat(wrong).isEmpty();
    }

    @Test
    void everyApiOperationNeedsAKeyExceptThePublicOnes() {
        var publicOps = new HashSet<String>();
        var missing401 = new ArrayList<String>();
        SPEC.root().path("paths").properties().forEach(path -> path.getValue().properties().forEach(op -> {
            if (!op.getValue().has("responses")) return;
            boolean isPublic = op.getValue().path("security").isArray() && op.getValue().path("security").isEmpty();
            if (isPublic) publicOps.add(op.getKey().toUpperCase() + " " + path.getKey());
            // The S3 endpoint refuses credentials with S3's 403 (InvalidAccessKeyId, SignatureDoesNotMatch), never 401.
            else if (!op.getValue().path("responses").has(isS3(path.getKey()) ? "403" : "401")) missing401.add(op.getKey() + " " + path.getKey());
        }));
        // The web console's files hold nothing of anyone's: the page asks for a key and sends it with each call.
        assertThat(publicOps).containsExactlyInAnyOrder("GET /healthz", "GET " + OpenApiRoutes.PATH,
                "GET /", "GET /console/", "GET /console/{file}", "GET /console/vendor/{file}");
        assertThat(missing401).as("authenticated operations without a 401").isEmpty();
    }

    private static boolean isS3(String path) {
        return path.startsWith("/s3/");
    }

    private static boolean isE2b(String path) {
        return path.startsWith("/e2b/");
    }

    private static void collectRefs(JsonNode node, Set<String> out) {
        if (node.isObject()) {
            node.properties().forEach(e -> {
                if (e.getKey().equals("$ref")) out.add(e.getValue().asText());
                else collectRefs(e.getValue(), out);
            });
        } else if (node.isArray()) node.forEach(n -> collectRefs(n, out));
    }
}
