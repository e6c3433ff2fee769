package io.stasis.mcp;

import static io.stasis.mcp.JsonSchemas.integer;
import static io.stasis.mcp.JsonSchemas.object;
import static io.stasis.mcp.JsonSchemas.string;
import static io.stasis.mcp.JsonSchemas.stringArray;
import static io.stasis.mcp.JsonSchemas.stringMap;

import io.stasis.mcp.StasisTool.Kind;
import io.stasis.sdk.TemplateBuildException;
import io.stasis.sdk.TemplateBuildRequest;
import io.stasis.sdk.TemplateInfo;
import java.time.Duration;
import java.util.List;
import java.util.stream.Collectors;

/** Tools on templates: build one (from a Dockerfile or from shell steps) and wait for it, list them, delete one. */
final class TemplateTools {
    private static final int OUTPUT_LINES = 40;

    private TemplateTools() {
    }

    static List<StasisTool> all() {
        return List.of(build(), list(), delete());
    }

    private static StasisTool build() {
        var schema = object()
                .required("name", string("The template's name: lowercase letters, digits, '.', '_', '-'; sandbox_create then takes it "
                        + "as 'template'."))
                .optional("dockerfile", string("A Dockerfile: FROM a template (base: Debian with python3, git, curl; tiny: busybox), "
                        + "RUN, ENV, WORKDIR, USER, CMD. COPY needs a context, which this tool does not send. Give this or 'from'."))
                .optional("from", string("The template to build on (e.g. base) when giving 'run' instead of a Dockerfile."))
                .optional("run", stringArray("Shell commands run in order (each with sh -c, as root, in /), e.g. "
                        + "['apt-get update && apt-get install -y nodejs', 'npm install -g pnpm']."))
                .optional("env", stringMap("Variables set before the commands run and in every sandbox of the template."))
                .optional("startCmd", string("A command to start once the steps are done and keep running in the template: each "
                        + "sandbox then starts with it already running (a dev server, a REPL). Needs 'readyCmd'."))
                .optional("readyCmd", string("A command that exits 0 once startCmd is ready, e.g. 'curl -sf localhost:3000'."))
                .optional("waitSeconds", integer("How long to wait for the build (default 600); it goes on after that.", 1, 3600))
                .build();
        return new StasisTool("template_build", "Build template",
                "Builds a template of your own (your environment: packages, tools, files) in a sandbox, and waits until it is ready. "
                        + "Steps are cached: building again with the same first steps only runs the steps after them. Answers the "
                        + "template, or the failing step with its exit code and the end of its output.",
                schema, Kind.CHANGE, (client, args) -> {
                    var request = TemplateBuildRequest.builder(args.string("name"));
                    String dockerfile = args.optString("dockerfile");
                    if (dockerfile != null) {
                        if (args.has("from") || args.has("run") || args.has("env"))
                            throw new InvalidArgumentsException("give 'dockerfile' alone, or 'from' with 'run' and 'env'");
                        request.dockerfile(dockerfile);
                    } else {
                        String from = args.optString("from");
                        if (from == null) throw new InvalidArgumentsException("give 'dockerfile', or 'from' (e.g. base) with 'run' commands");
                        request.from(from);
                        if (!args.stringMap("env").isEmpty()) request.env(args.stringMap("env"));
                        for (String command : args.strings("run")) request.run(command);
                    }
                    String start = args.optString("startCmd");
                    String ready = args.optString("readyCmd");
                    if ((start == null) != (ready == null)) throw new InvalidArgumentsException("'startCmd' and 'readyCmd' go together");
                    if (start != null) request.preboot(start, ready);
                    String name = args.string("name");
                    client.templates().build(request.build());
                    var wait = Duration.ofSeconds(args.integer("waitSeconds", 600, 1, 3600));
                    try {
                        TemplateInfo built = client.templates().awaitBuild(name, wait);
                        if (built.isBuilding())
                            return ToolResult.of("template " + name + " is still building after " + wait.toSeconds()
                                    + " s; call template_list later", built);
                        return ToolResult.of("template " + name + " version " + built.version() + " is ready"
                                + (built.isPrebooted() ? " (pre-booted: its sandboxes start with '" + built.startCmd() + "' running)" : "")
                                + "; create sandboxes with sandbox_create template=" + name, built);
                    } catch (TemplateBuildException e) {
                        var failure = e.failure();
                        String text = "template " + name + " failed" + (failure == null ? ": " + e.getMessage()
                                : " at step " + failure.step() + " (" + failure.instruction() + ")"
                                + (failure.exitCode() == null ? "" : ", exit code " + failure.exitCode()) + ": " + failure.message()
                                + "\n" + failure.outputTail(OUTPUT_LINES));
                        return new ToolResult(text, ToolResult.of(text, e.template()).structured(), true);
                    }
                });
    }

    private static StasisTool list() {
        return new StasisTool("template_list", "List templates", "Lists the templates sandboxes can be made from: the service's "
                + "(tiny, base) and the ones you built, with their status (ready, building, failed).", object().build(), Kind.READ,
                (client, args) -> {
                    var templates = client.templates().list();
                    String text = templates.stream().map(t -> t.name() + "  " + t.status() + (t.version() == null ? "" : "  v" + t.version())
                            + (t.description() == null || t.description().isBlank() ? "" : "  " + t.description()))
                            .collect(Collectors.joining("\n"));
                    return ToolResult.list(text, templates);
                });
    }

    private static StasisTool delete() {
        return new StasisTool("template_delete", "Delete template", "Deletes a template you built, with its cached steps. "
                + "Refused while sandboxes made from it exist.", object().required("name", string("The template's name.")).build(),
                Kind.DESTRUCTIVE, (client, args) -> {
                    String name = args.string("name");
                    client.templates().delete(name);
                    return ToolResult.text("deleted template " + name);
                });
    }
}
