-- The prompt-length segment of an attempt: i holds input_tokens in [edges[i], edges[i+1]) (0: below edges[1];
-- length(edges): at or above the last edge); -1 the attempts without input_tokens.
if(input_tokens IS NULL, -1, toInt32(arrayCount(e -> assumeNotNull(input_tokens) >= e, {edges:Array(UInt32)})))
