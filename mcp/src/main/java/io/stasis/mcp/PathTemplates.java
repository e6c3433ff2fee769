package io.stasis.mcp;

import io.modelcontextprotocol.util.McpUriTemplateManager;
import io.modelcontextprotocol.util.McpUriTemplateManagerFactory;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * URI templates whose reserved expansions ({@code {+path}}, RFC 6570) match across slashes: the
 * SDK's default manager matches every variable up to the next {@code /}, so a file path could not
 * be one. A plain {@code {name}} still stops at a slash.
 */
final class PathTemplates implements McpUriTemplateManagerFactory {
    private static final Pattern VARIABLE = Pattern.compile("\\{(\\+?)([A-Za-z0-9_]+)}");

    @Override
    public McpUriTemplateManager create(String template) {
        return new Manager(template);
    }

    private static final class Manager implements McpUriTemplateManager {
        private final String template;
        private final List<String> names = new ArrayList<>();
        private final Pattern pattern;

        Manager(String template) {
            this.template = template;
            var regex = new StringBuilder("^");
            Matcher m = VARIABLE.matcher(template);
            int last = 0;
            while (m.find()) {
                regex.append(Pattern.quote(template.substring(last, m.start())));
                regex.append(m.group(1).isEmpty() ? "([^/]+)" : "(.+)");
                names.add(m.group(2));
                last = m.end();
            }
            regex.append(Pattern.quote(template.substring(last))).append('$');
            this.pattern = Pattern.compile(regex.toString());
        }

        @Override
        public List<String> getVariableNames() {
            return List.copyOf(names);
        }

        @Override
        public Map<String, String> extractVariableValues(String uri) {
            var values = new LinkedHashMap<String, String>();
            Matcher m = pattern.matcher(uri);
            if (m.matches()) for (int i = 0; i < names.size(); i++) values.put(names.get(i), m.group(i + 1));
            return values;
        }

        @Override
        public boolean matches(String uri) {
            return pattern.matcher(uri).matches();
        }

        @Override
        public boolean isUriTemplate(String uri) {
            return VARIABLE.matcher(uri).find();
        }

        @Override
        public String toString() {
            return template;
        }
    }
}
