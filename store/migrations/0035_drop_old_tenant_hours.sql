-- tenant_hours as it was before 0033.
DROP TABLE IF EXISTS tenant_hours_swap
