-- A minute window and an hour window of one key can start at the same instant; the window's end
-- (hence its size) is part of its identity, so they count separately.
ALTER TABLE rate_limit_windows DROP CONSTRAINT rate_limit_windows_pkey;
ALTER TABLE rate_limit_windows ADD PRIMARY KEY (key, window_start, window_end);
