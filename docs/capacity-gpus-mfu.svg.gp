# Written by `syncsim plot`; run `gnuplot docs/capacity-gpus-mfu.svg.gp` to redraw.
set terminal svg size 900,560 dynamic noenhanced font 'Sans,12' background rgb 'white'
set output "docs/capacity-gpus-mfu.svg"
set title "capacity-gpus.yaml: Llama-3-70B DDP on H100, packed on a 4096-GPU spine-leaf (800G uplinks)"
set xlabel "GPUs in the job (workload.data_parallel)"
set ylabel "MFU"
set grid
set key below
set datafile separator '\t'
set logscale x
set xtics (256, 512, 1024, 2048, 4096)
set autoscale xfix
set offsets graph 0.04, graph 0.04, graph 0.05, graph 0.05
$d0 << EOD
256	0.40892102557279575	256
512	0.3948045063691254	512
1024	0.3816088795285129	1024
2048	0.36925507627673765	2048
4096	0.35822208014284473	4096
EOD
$d1 << EOD
256	0.40892466208582245	256
512	0.3948090342794277	512
1024	0.3816063036968052	1024
2048	0.36921207897150055	2048
4096	0.3581965239320836	4096
EOD
$d2 << EOD
256	0.5938242144816733	256
512	0.5936229993663648	512
1024	0.5933899438741818	1024
2048	0.5808227424574205	2048
4096	0.5645211338412337	4096
EOD
$d3 << EOD
256	0.5937795004161114	256
512	0.5935811899922177	512
1024	0.5929415361837368	1024
2048	0.5740763950019875	2048
4096	0.5589946132550977	4096
EOD
plot $d0 using 1:2 with linespoints lw 2 lc 1 dt 1 pt 7 ps 1 title "fabric.links.host.bandwidth=400Gbps, fabric.spine_leaf.oversubscription=1", \
     $d1 using 1:2 with linespoints lw 2 lc 1 dt 2 pt 4 ps 1.6 title "fabric.links.host.bandwidth=400Gbps, fabric.spine_leaf.oversubscription=3", \
     $d2 using 1:2 with linespoints lw 2 lc 2 dt 1 pt 7 ps 1 title "fabric.links.host.bandwidth=800Gbps, fabric.spine_leaf.oversubscription=1", \
     $d3 using 1:2 with linespoints lw 2 lc 2 dt 2 pt 4 ps 1.6 title "fabric.links.host.bandwidth=800Gbps, fabric.spine_leaf.oversubscription=3"
