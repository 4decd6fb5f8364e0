-- The optional route and tenant filters of a read: '' matches any.
({route:String} = '' OR route = {route:String}) AND ({tenant:String} = '' OR tenant = {tenant:String})
