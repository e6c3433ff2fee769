/**
 * Small runnable programs using only the Stasis Java SDK, each with a {@code main} that reads
 * {@code STASIS_URL} and {@code STASIS_API_KEY}:
 * <ul>
 *   <li>{@link io.stasis.examples.Quickstart}: create, exec, files, delete</li>
 *   <li>{@link io.stasis.examples.BackgroundProcessExample}: a background process with streamed output</li>
 *   <li>{@link io.stasis.examples.NetworkAndPreview}: a network policy and a preview URL</li>
 *   <li>{@link io.stasis.examples.CheckpointForkHibernate}: checkpoint, fork, hibernate and resume</li>
 * </ul>
 * They compile in every build; run one with
 * {@code java -cp examples/target/classes:<the SDK and its dependencies> io.stasis.examples.Quickstart}.
 */
package io.stasis.examples;
