-- Nested values in the store are written by the same mapper as the wire (snake_case). Runs
-- recorded before that kept their artifacts with camelCase names (sizeBytes, mediaType): rename
-- them, keeping every value and the order of the list.
UPDATE runs
SET artifacts_json = (
    SELECT json_group_array(json_object(
        'path', json_extract(a.value, '$.path'),
        'size_bytes', json_extract(a.value, '$.sizeBytes'),
        'sha256', json_extract(a.value, '$.sha256'),
        'media_type', json_extract(a.value, '$.mediaType'),
        'change', json_extract(a.value, '$.change'),
        'skipped', json_extract(a.value, '$.skipped')))
    FROM json_each(runs.artifacts_json) AS a)
WHERE artifacts_json IS NOT NULL
  AND json_valid(artifacts_json)
  AND json_type(artifacts_json, '$[0].sizeBytes') IS NOT NULL;
