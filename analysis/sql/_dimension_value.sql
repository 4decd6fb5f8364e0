-- An attempt's value of the dimension named {dimension} (analysis.reads.queries.DIMENSIONS, checked in Python);
-- '' (or any other name) puts every attempt under ''.
multiIf({dimension:String} = 'route', route, {dimension:String} = 'tenant', tenant, '')
