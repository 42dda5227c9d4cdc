-- wrk script: alternate between the demo target's fast root and its slow endpoint, so that a short
-- --timeout makes wrk print socket timeouts beside completed requests. Our own generator.
local n = 0
request = function()
  n = n + 1
  if n % 5 == 0 then
    return wrk.format("GET", "/slow")
  end
  return wrk.format("GET", "/")
end
