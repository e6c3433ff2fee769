package io.stasis.sdk;

/**
 * A template's build failed ({@link Templates#awaitBuild}). The message says where and why,
 * with the last lines of the build's output; {@link #template()} has the whole report.
 *
 * <pre>{@code
 * try {
 *     client.templates().awaitBuild("app", Duration.ofMinutes(30));
 * } catch (TemplateBuildException e) {
 *     var f = e.failure();   // step, instruction, exitCode, message, output
 *     System.err.println(e.getMessage());
 * }
 * }</pre>
 */
public class TemplateBuildException extends StasisClientException {
    /** How many lines of the build's output the message ends with. */
    static final int TAIL_LINES = 20;

    private final TemplateInfo template;

    public TemplateBuildException(TemplateInfo template) {
        super(describe(template));
        this.template = template;
    }

    /** The template as it was when the failure was seen. */
    public TemplateInfo template() {
        return template;
    }

    /** Where and why the build failed; null for a service template's build, whose reason is the template's {@code message}. */
    public TemplateInfo.BuildFailure failure() {
        return template.failure();
    }

    /** {@code template app failed at step 3 of 7 (RUN make), exit code 2: ...}, then the output's last lines. */
    static String describe(TemplateInfo t) {
        TemplateInfo.BuildFailure f = t.failure();
        if (f == null) return "template " + t.name() + " failed" + (t.message() == null ? "" : ": " + t.message());
        var text = new StringBuilder("template ").append(t.name()).append(" failed");
        if (f.step() > 0) {
            text.append(" at step ").append(f.step());
            if (t.build().steps() > 0) text.append(" of ").append(t.build().steps());
            if (f.instruction() != null && !f.instruction().isEmpty()) text.append(" (").append(f.instruction()).append(')');
        }
        if (f.exitCode() != null) text.append(", exit code ").append(f.exitCode());
        if (f.message() != null && !f.message().isEmpty()) text.append(": ").append(f.message());
        String tail = f.outputTail(TAIL_LINES);
        if (!tail.isBlank()) text.append("\n").append(tail);
        return text.toString();
    }
}
