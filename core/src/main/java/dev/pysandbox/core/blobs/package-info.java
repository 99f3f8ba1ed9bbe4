/**
 * The files runs keep: {@link dev.pysandbox.core.blobs.RunFiles} copies what a run created or
 * changed (regular files only, by descriptor, within the quota) to a destination, the
 * content-addressed blob store ({@link dev.pysandbox.core.blobs.KeptBlobs}, with its start-up
 * {@link dev.pysandbox.core.blobs.BlobMigration}) or a plain directory, and {@link
 * dev.pysandbox.core.blobs.TenantStorage} bounds what one tenant keeps. It uses the api, the store
 * SPI and core.files only.
 */
package dev.pysandbox.core.blobs;
