package io.stasis.server.http;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import com.networknt.schema.InputFormat;
import com.networknt.schema.SchemaLocation;
import com.networknt.schema.SchemaRegistry;
import com.networknt.schema.dialect.Dialects;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Pattern;

/**
 * The server's {@code openapi.yaml} as tests use it: its operations, and a validator of response
 * bodies against the schema the spec names for an operation and status (JSON Schema 2020-12 with
 * the OpenAPI 3.1 base dialect).
 *
 * <p>Validation is stricter than the spec reads: every object schema with {@code properties} is
 * closed ({@code unevaluatedProperties: false}) unless it says otherwise, so a field the server
 * sends but the spec does not name fails the test. The spec itself stays open, since clients are
 * to ignore fields they do not know.
 */
public final class OpenApiSpec {
    /** Where the spec is registered for {@code $ref} resolution; never fetched. */
    private static final String BASE = "https://stasis.invalid/openapi.json";
    private static final Set<String> METHODS = Set.of("get", "put", "post", "delete", "patch", "head", "options", "trace");
    private static final Pattern PARAMETER = Pattern.compile("\\{[^}/]+}");
    private static final ObjectMapper JSON = new ObjectMapper();

    private final String yaml;
    private final JsonNode root;
    private final SchemaRegistry schemas;

    private OpenApiSpec(String yaml) {
        this.yaml = yaml;
        try {
            this.root = new ObjectMapper(new YAMLFactory()).readTree(yaml);
        } catch (IOException e) {
            throw new UncheckedIOException("openapi.yaml is not YAML", e);
        }
        ObjectNode strict = root.deepCopy();
        strict.path("components").path("schemas").forEach(OpenApiSpec::close);
        String strictJson = strict.toString();
        this.schemas = SchemaRegistry.withDefaultDialect(Dialects.getOpenApi31(), b -> b.schemas(Map.of(BASE, strictJson)));
    }

    /** The spec the server serves, from its classpath. */
    public static OpenApiSpec load() {
        try (InputStream in = OpenApiSpec.class.getResourceAsStream("/openapi.yaml")) {
            if (in == null) throw new IllegalStateException("openapi.yaml is not on the classpath");
            return new OpenApiSpec(new String(in.readAllBytes(), StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    public String yaml() {
        return yaml;
    }

    public JsonNode root() {
        return root;
    }

    /** {@code /v1/sandboxes/{id}/processes/{pid}} becomes {@code /v1/sandboxes/{}/processes/{}}: names of parameters do not matter. */
    public static String normalize(String path) {
        // Javalin's <key> parameters (which may hold '/') are parameters too.
        return PARAMETER.matcher(path.replaceAll("<[^>/]+>", "{}")).replaceAll("{}");
    }

    /** Every operation as {@code "GET /v1/sandboxes/{}"}, sorted. */
    public Set<String> operations() {
        var out = new TreeSet<String>();
        root.path("paths").properties().forEach(path -> path.getValue().properties().stream().map(Map.Entry::getKey).forEach(method -> {
            if (METHODS.contains(method)) out.add(method.toUpperCase(Locale.ROOT) + " " + normalize(path.getKey()));
        }));
        return out;
    }

    /** The path template of the spec that a concrete request path falls under; the most literal one wins. */
    public Optional<String> template(String concretePath) {
        var matches = new ArrayList<String>();
        root.path("paths").properties().stream().map(Map.Entry::getKey).forEach(template -> {
            String regex = PARAMETER.matcher(Pattern.quote(template)).replaceAll("\\\\E[^/]+\\\\Q");
            if (concretePath.matches(regex)) matches.add(template);
        });
        return matches.stream().min(Comparator.comparingLong(t -> PARAMETER.matcher(t).results().count()));
    }

    /**
     * Checks that the spec documents {@code status} for the operation and that {@code body}
     * matches its {@code application/json} schema.
     *
     * @throws AssertionError naming the operation and every violation
     */
    public void validate(String method, String concretePath, int status, String body) {
        String path = concretePath.contains("?") ? concretePath.substring(0, concretePath.indexOf('?')) : concretePath;
        String where = method + " " + path + " -> " + status;
        String template = template(path).orElseThrow(() -> new AssertionError(where + ": no path of the spec matches"));
        JsonNode operation = root.path("paths").path(template).path(method.toLowerCase(Locale.ROOT));
        if (operation.isMissingNode()) throw new AssertionError(where + ": the spec has no " + method + " " + template);
        JsonNode response = resolve(operation.path("responses").path(Integer.toString(status)));
        if (response.isMissingNode()) throw new AssertionError(where + ": status " + status + " is not documented for " + template);
        JsonNode schema = response.path("content").path("application/json").path("schema");
        if (schema.isMissingNode()) throw new AssertionError(where + ": the spec gives no application/json schema");
        String ref = schema.path("$ref").asText(null);
        if (ref == null) throw new AssertionError(where + ": JSON response schemas are to be $refs to components/schemas");
        var errors = schemas.getSchema(SchemaLocation.of(BASE + ref)).validate(body, InputFormat.JSON);
        if (!errors.isEmpty())
            throw new AssertionError(where + " (" + ref + "): the body does not match the spec:\n  "
                    + String.join("\n  ", errors.stream().map(Object::toString).toList()) + "\nbody: " + body);
    }

    /** Validates one value against a named schema of components/schemas. */
    public List<String> errors(String schemaName, JsonNode value) {
        return schemas.getSchema(SchemaLocation.of(BASE + "#/components/schemas/" + schemaName)).validate(value.toString(), InputFormat.JSON)
                .stream().map(Object::toString).toList();
    }

    /** Follows a {@code $ref} to components/responses (one level; the spec has no chains). */
    JsonNode resolve(JsonNode node) {
        String ref = node.path("$ref").asText(null);
        if (ref == null) return node;
        return root.at(ref.substring(1));
    }

    /** Closes object schemas that do not say whether they are open; leaves allOf/anyOf/oneOf branches alone. */
    private static void close(JsonNode schema) {
        if (!(schema instanceof ObjectNode object)) return;
        JsonNode properties = object.get("properties");
        if (properties != null && properties.isObject() && !object.has("additionalProperties") && !object.has("unevaluatedProperties"))
            object.put("unevaluatedProperties", false);
        if (properties != null) properties.forEach(OpenApiSpec::close);
        close(object.get("items"));
        close(object.get("additionalProperties"));
    }

    static JsonNode parseJson(String text) {
        try {
            return JSON.readTree(text);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
