/**
 * The Java client of the Stasis REST API: {@link io.stasis.sdk.StasisClient} is the entry point,
 * {@link io.stasis.sdk.Sandboxes} the sandbox calls by id or name, {@link io.stasis.sdk.Sandbox}
 * one sandbox with its {@linkplain io.stasis.sdk.Sandbox#files() files},
 * {@linkplain io.stasis.sdk.Sandbox#processes() processes} and
 * {@linkplain io.stasis.sdk.Sandbox#previews() previews}, {@link io.stasis.sdk.Templates} the
 * templates sandboxes are made from, built from steps or a Dockerfile. Larger requests have builders
 * ({@link io.stasis.sdk.CreateSandboxRequest}, {@link io.stasis.sdk.ExecRequest},
 * {@link io.stasis.sdk.ProcessRequest}, {@link io.stasis.sdk.NetworkPolicy},
 * {@link io.stasis.sdk.TemplateBuildRequest}, ...).
 *
 * <pre>{@code
 * try (StasisClient client = StasisClient.connect(System.getenv("STASIS_URL"), System.getenv("STASIS_API_KEY"))) {
 *     Sandbox sandbox = client.sandboxes().create(CreateSandboxRequest.builder().template("tiny").build());
 *     System.out.print(sandbox.exec("uname", "-a").stdout());
 *     sandbox.delete();
 * }
 * }</pre>
 *
 * <h2>Examples</h2>
 * Runnable programs, compiled in every build, are in the {@code examples} module
 * ({@code examples/src/main/java/io/stasis/examples}), each with a {@code main} reading
 * {@code STASIS_URL} and {@code STASIS_API_KEY}:
 * <ul>
 *   <li>{@code Quickstart}: create, exec, files, delete</li>
 *   <li>{@code BackgroundProcessExample}: a background process with its output streamed</li>
 *   <li>{@code NetworkAndPreview}: a network policy and a preview URL</li>
 *   <li>{@code CheckpointForkHibernate}: checkpoint, fork, hibernate and resume</li>
 * </ul>
 */
package io.stasis.sdk;
