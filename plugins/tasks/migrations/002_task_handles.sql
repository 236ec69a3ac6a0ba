-- A caller-chosen task id (sandbox directives such as comply_test_controller force_create_media_buy_arm):
-- answered as task_id and found by get_task_status for its principal only; the newest task keeps it.
ALTER TABLE tasks ADD COLUMN handle text;
CREATE UNIQUE INDEX tasks_principal_handle ON tasks (principal_id, handle) WHERE handle IS NOT NULL;
